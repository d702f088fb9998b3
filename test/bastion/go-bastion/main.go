// A minimal https-bastion in Go, standard library only (Go 1.19+), for interop tests of the
// anchor-witness bastion backend: what torchwood's litebastion does with one backend, minus the
// public HTTPS front. It listens with TLS 1.3, requires a client certificate (any, self-signed)
// and ALPN bastion/0, identifies the backend by the SHA-256 of its Ed25519 public key, and then
// acts as the HTTP/2 client on that connection (net/http's bundled HTTP/2 transport, reached by
// mapping ALPN bastion/0 to its h2 upgrade). It forwards the requests given on the command line
// as litebastion would forward them (X-Forwarded-For set to one address) and prints each answer.
//
//	go-bastion -cert-out ca.pem -xff 192.0.2.7 METHOD:PATH[:BODYFILE]...
package main

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	neturl "net/url"
	"os"
	"strings"
	"time"
)

func main() {
	certOut := flag.String("cert-out", "", "write the bastion's certificate (PEM) here")
	xff := flag.String("xff", "", "X-Forwarded-For of the forwarded requests")
	flag.Parse()

	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "go bastion"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		DNSNames: []string{"localhost"}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, pub, priv)
	check(err)
	check(os.WriteFile(*certOut, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644))

	var keyHash string
	config := &tls.Config{
		MinVersion: tls.VersionTLS13, NextProtos: []string{"bastion/0"},
		Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: priv}},
		ClientAuth:   tls.RequireAnyClientCert,
		VerifyConnection: func(cs tls.ConnectionState) error {
			if cs.NegotiatedProtocol != "bastion/0" {
				return errors.New("not bastion/0")
			}
			k, ok := cs.PeerCertificates[0].PublicKey.(ed25519.PublicKey)
			if !ok {
				return errors.New("not an Ed25519 client certificate")
			}
			h := sha256.Sum256(k)
			keyHash = hex.EncodeToString(h[:])
			return nil
		},
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", config)
	check(err)
	fmt.Printf("listening localhost:%d\n", ln.Addr().(*net.TCPAddr).Port)
	c, err := ln.Accept()
	check(err)
	conn := c.(*tls.Conn)
	check(conn.Handshake())
	fmt.Printf("backend %s\n", keyHash)

	t := &http.Transport{
		ForceAttemptHTTP2: true,
		DialTLSContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return conn, nil
		},
	}
	// Initialise the transport's HTTP/2 upgrade ("h2"), then use it for bastion/0 as litebastion does.
	_, _ = t.RoundTrip(&http.Request{Method: "GET", URL: mustURL("http://unused.invalid/"), Header: http.Header{}})
	t.TLSNextProto["bastion/0"] = t.TLSNextProto["h2"]
	client := &http.Client{Transport: t, Timeout: 10 * time.Second}

	for _, spec := range flag.Args() {
		parts := strings.SplitN(spec, ":", 3)
		var body io.Reader
		if len(parts) == 3 {
			b, err := os.ReadFile(parts[2])
			check(err)
			body = strings.NewReader(string(b))
		}
		req, err := http.NewRequest(parts[0], "https://"+keyHash+parts[1], body)
		check(err)
		if *xff != "" {
			req.Header.Set("X-Forwarded-For", *xff)
		}
		res, err := client.Do(req)
		check(err)
		b, err := io.ReadAll(res.Body)
		check(err)
		res.Body.Close()
		fmt.Printf("answer %s %s %d %s %q\n", parts[0], parts[1], res.StatusCode, res.Proto, string(b))
	}
	fmt.Println("DONE")
}

func mustURL(s string) *neturl.URL {
	u, err := neturl.Parse(s)
	check(err)
	return u
}

func check(err error) {
	if err != nil {
		fmt.Println("FAIL", err)
		os.Exit(1)
	}
}
