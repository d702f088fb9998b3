/**
 * What `createServer` takes: the options, their defaults and checks, the per-route `config` keys
 * the layer reads (a fastify type augmentation), and the `App` type every route module builds on.
 */
import type http from 'node:http';
import type https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Registry } from 'prom-client';
import type { LoggerOptions } from 'pino';
import type { StoreHealth } from '../store/health.ts';
import { ServerConfigError } from './errors.ts';
import type { ProblemInit } from './problem.ts';
import type { RateLimitSpec } from './rate-limit.ts';

/** Problem codes used for validation failures, per request part (route config `validationCodes`). */
export interface ValidationCodes {
  body?: string;
  querystring?: string;
  params?: string;
  headers?: string;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** skip the in-flight queue and the rate limit (`/`, `/health`, `/metrics`) */
    bypassLimits?: boolean;
    /** rate-limit this route (true) or not (false); unset = the server's `rateLimit.scope` decides */
    rateLimit?: boolean;
    /** deliver the body as a Buffer whatever its Content-Type (the C2SP /add-checkpoint route) */
    rawBody?: boolean;
    /** JSON members whose integers may exceed 2^53−1 (delivered as decimal strings) */
    bigIntegerKeys?: readonly string[];
    /** problem codes for schema failures (defaults: malformed_body / _query / _params / _headers) */
    validationCodes?: ValidationCodes;
  }
  interface FastifyRequest {
    /** the client address under SPEC §2's trust-proxy rule (canonical text) */
    clientIp: string;
  }
}

export type App = FastifyInstance<http.Server, IncomingMessage, ServerResponse, FastifyBaseLogger, TypeBoxTypeProvider>;

/** A route's `config` as the layer reads it. */
export type RouteConfig = FastifyRequest['routeOptions']['config'];

/** Map an error to a problem, or return undefined to fall through to the built-in mapping. */
export type ErrorMapper = (error: unknown, request: FastifyRequest) => ProblemInit | undefined;

export interface RateLimitOptions extends RateLimitSpec {
  /** 'all' (default): every route not opted out; 'opt-in': only routes with config `rateLimit: true` */
  scope?: 'all' | 'opt-in';
  /** cap on tracked client keys (default 100 000) */
  maxClients?: number;
}

export interface ServerOptions {
  maxBodyBytes?: number; // 65 536
  maxInFlight?: number; // 256
  maxQueue?: number; // 1 024
  requestTimeoutMs?: number; // 10 000
  maxConnections?: number; // 4 096
  maxConnectionsPerIp?: number; // 64
  keepAliveTimeoutMs?: number; // 5 000
  rateLimit?: RateLimitOptions | null; // off
  trustProxy?: readonly string[]; // CIDRs; empty = the socket peer is the client
  /** a pino logger, pino options, or true/false (default false: no logging) */
  logger?: FastifyBaseLogger | LoggerOptions | boolean;
  metrics?: Registry;
  problemTypeBase?: string;
  mapError?: ErrorMapper;
  /**
   * The store's health: a store outage a request reports goes there (one log line per outage
   * episode, src/store/health.ts). Without it each 503 store_unavailable is logged (without stack).
   */
  storeHealth?: StoreHealth;
  /** Retry-After seconds on 503 overloaded / store_unavailable (default 1) */
  retryAfterSeconds?: number;
  /** register @fastify/swagger and GET /openapi.json */
  openapi?: { title: string; version: string; description?: string } | false;
  /** TLS: key/cert etc. for https.createServer; absent = plain HTTP */
  https?: https.ServerOptions | null;
  /** one info line per finished request (default true; no effect without a logger) */
  accessLog?: boolean;
}

/** The numeric limits, checked and with their defaults filled in. */
export interface Limits {
  readonly maxBodyBytes: number;
  readonly maxInFlight: number;
  readonly maxQueue: number;
  /** the request deadline T, from the request's first byte */
  readonly requestTimeoutMs: number;
  readonly maxConnections: number;
  readonly maxConnectionsPerIp: number;
  readonly keepAliveTimeoutMs: number;
  readonly retryAfterSeconds: number;
  /** a queued request must start with at least this much of its deadline left: min(100 ms, T/10) */
  readonly minStartMs: number;
}

const DEFAULTS = {
  maxBodyBytes: 65_536,
  maxInFlight: 256,
  maxQueue: 1_024,
  requestTimeoutMs: 10_000,
  maxConnections: 4_096,
  maxConnectionsPerIp: 64,
  keepAliveTimeoutMs: 5_000,
} as const;

function positiveInt(name: string, v: number | undefined, dflt: number, min = 1): number {
  const n = v ?? dflt;
  if (!Number.isSafeInteger(n) || n < min)
    throw new ServerConfigError('invalid_option', `${name} must be an integer ≥ ${min}, got ${String(v)}`);
  return n;
}

/** Check the numeric options (ServerConfigError `invalid_option`) and fill in the defaults. */
export function resolveLimits(options: ServerOptions): Limits {
  const requestTimeoutMs = positiveInt('requestTimeoutMs', options.requestTimeoutMs, DEFAULTS.requestTimeoutMs, 100);
  return {
    requestTimeoutMs,
    maxBodyBytes: positiveInt('maxBodyBytes', options.maxBodyBytes, DEFAULTS.maxBodyBytes),
    maxInFlight: positiveInt('maxInFlight', options.maxInFlight, DEFAULTS.maxInFlight),
    maxQueue: positiveInt('maxQueue', options.maxQueue, DEFAULTS.maxQueue, 0),
    maxConnections: positiveInt('maxConnections', options.maxConnections, DEFAULTS.maxConnections),
    maxConnectionsPerIp: positiveInt('maxConnectionsPerIp', options.maxConnectionsPerIp, DEFAULTS.maxConnectionsPerIp),
    keepAliveTimeoutMs: positiveInt('keepAliveTimeoutMs', options.keepAliveTimeoutMs, DEFAULTS.keepAliveTimeoutMs),
    retryAfterSeconds: positiveInt('retryAfterSeconds', options.retryAfterSeconds, 1),
    minStartMs: Math.min(100, requestTimeoutMs / 10),
  };
}
