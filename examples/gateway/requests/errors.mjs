// The two errors of a request that the gateway cannot send: the client's (RequestError, a 400 in
// the client's API shape) and the gateway's own configuration's (GatewayConfigError, a 500).

/**
 * A request the gateway cannot carry to its upstream: answered 400 in the client's API shape
 * (`param`: the field at fault, which OpenAI's error names, where one is).
 */
export class RequestError extends Error {
  constructor(message, param = undefined) {
    super(message);
    this.name = 'RequestError';
    if (param !== undefined) this.param = param;
  }
}

/**
 * What the gateway's own configuration lacks for a request (a bedrock upstream without its AWS
 * credentials or region): the gateway's fault, not the client's, so a 500 counted in
 * gateway_errors_total. Its message names what to set, never a value, and is shown to the client.
 */
export class GatewayConfigError extends Error {
  constructor(message) {
    super(message);
    this.name = 'GatewayConfigError';
  }
}
