/** Host names: is a URL's host the local machine (loopback)? Pure: no name resolution. */

/** `localhost`, an IPv4 address in 127.0.0.0/8, or `::1` (bare or bracketed, as URL.hostname gives it). */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.toLowerCase();
  return h === 'localhost' || h === '[::1]' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}
