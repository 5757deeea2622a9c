// A Bedrock upstream's requests (bedrock, bedrock-invoke) signed with SigV4: its region, what the
// gateway's environment lacks to sign, the signer, and the signing of a request's body.
import { GatewayConfigError } from './errors.mjs';

/** The region of a Bedrock endpoint (`bedrock-runtime.<region>.amazonaws.com`), else AWS_REGION or AWS_DEFAULT_REGION. */
function regionOf(hostname, env) {
  const m = /^bedrock-runtime(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com$/.exec(hostname);
  return m?.[1] ?? env.AWS_REGION ?? env.AWS_DEFAULT_REGION;
}

/**
 * What a bedrock upstream at `hostname` lacks in the environment `env` to sign its requests (its
 * AWS credentials, its region), in words that name the variables to set and never a value; undefined
 * when nothing. The gateway warns of it when it starts, and fails each request with it.
 */
export function bedrockLacks(hostname, env) {
  const missing = [];
  const unset = ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY'].filter((k) => !env[k]);
  if (unset.length > 0) missing.push(`${unset.join(' and ')} ${unset.length > 1 ? 'are' : 'is'} not set in its environment`);
  if (!regionOf(hostname, env)) missing.push('its region is not set: AWS_REGION (or AWS_DEFAULT_REGION) in its environment, or a bedrock-runtime.<region>.amazonaws.com upstream URL');
  return missing.length === 0 ? undefined : `the gateway cannot sign for its bedrock upstream: ${missing.join('; ')}`;
}

/**
 * A signer for a Bedrock request: SigV4 by AWS's own signer (@smithy/signature-v4, SHA-256 from
 * @smithy/hash-node), credentials from the usual AWS_* environment variables. Loaded when a
 * Bedrock upstream is first used: the gateway needs it for no other. Without the credentials or
 * the region, a signer that fails with a GatewayConfigError naming what is missing: the gateway's
 * misconfiguration fails the request as a signing failure does (a 500, not the client's 400).
 */
export function bedrockSigner(hostname, env) {
  const accessKeyId = env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY;
  const region = regionOf(hostname, env);
  const lacking = bedrockLacks(hostname, env);
  if (lacking !== undefined) {
    const err = new GatewayConfigError(lacking);
    return () => Promise.reject(err);
  }
  const credentials = { accessKeyId, secretAccessKey, ...(env.AWS_SESSION_TOKEN ? { sessionToken: env.AWS_SESSION_TOKEN } : {}) };
  return async (request) => {
    const [{ SignatureV4 }, { Hash }] = await Promise.all([import('@smithy/signature-v4'), import('@smithy/hash-node')]);
    const signer = new SignatureV4({ service: 'bedrock', region, credentials, sha256: Hash.bind(null, 'sha256') });
    const signed = await signer.sign(request);
    return signed.headers;
  };
}

/**
 * A URL query's parameters as AWS reads them, `[name, value]` in their order: split at `&` and
 * each at its first `=`, both sides percent-decoded as RFC 3986 has it, a `+` a plus (as AWS's
 * SDK reads a URL's query, @smithy/querystring-parser), not the space a form's decoding
 * (URLSearchParams) makes of it; a name without `=` has the value ''. A malformed escape (or one
 * that is not UTF-8) throws a URIError.
 */
export function queryParams(search) {
  const out = [];
  for (const part of search.replace(/^\?/, '').split('&')) {
    if (part === '') continue;
    const at = part.indexOf('=');
    out.push([decodeURIComponent(at === -1 ? part : part.slice(0, at)), at === -1 ? '' : decodeURIComponent(part.slice(at + 1))]);
  }
  return out;
}

/** A name or value as SigV4's canonical query writes it (AWS's escapeUri): RFC 3986's unreserved characters as they are, every other byte %XX. */
const escapeUri = (s) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/**
 * The query a signed request goes with (`?…`, or '' for none): `search`'s parameters in their
 * order, each name and value written as SigV4's canonical query writes it, so that the bytes sent
 * leave the upstream nothing to read otherwise than the signer did (a `+` goes as %2B: sent as it
 * was, a server that reads it as a form's space would have checked the signature over another
 * query). A malformed escape throws a URIError.
 */
export const signedQuery = (search) => {
  const params = queryParams(search);
  return params.length === 0 ? '' : `?${params.map(([k, v]) => `${escapeUri(k)}=${escapeUri(v)}`).join('&')}`;
};

/**
 * `sign(body)` for a request: the headers with SigV4's, for the body's bytes. The path and the
 * query signed are the request's own as it is sent (`target.path`: the base URL's query as
 * signedQuery writes it), each parameter as often as it is there (AWS signs every one), read as
 * AWS reads it (queryParams). The Host header is signed as the gateway's client sends it
 * (`host:port`) and left to that client to write.
 */
export function signing(sign, url, target, headers) {
  return async (body) => {
    const at = target.path.indexOf('?');
    const path = at === -1 ? target.path : target.path.slice(0, at);
    const query = Object.create(null);
    for (const [k, v] of queryParams(at === -1 ? '' : target.path.slice(at + 1))) query[k] = k in query ? [].concat(query[k], v) : v;
    const signed = await sign({ method: 'POST', protocol: url.protocol, hostname: url.hostname, port: target.port, path, query, headers: { ...headers, host: `${url.hostname}:${target.port}` }, body });
    const { host: _host, ...rest } = signed;
    return rest;
  };
}
