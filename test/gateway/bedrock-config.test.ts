// A bedrock upstream without its AWS credentials or region in the gateway's environment is the
// gateway's misconfiguration, not the client's error: each request is failed as a request the
// gateway cannot sign is (signing.test.ts), a 500 in the client's shape with the request id,
// counted in gateway_errors_total and as a failed stream, not as the provider's error, the
// upstream not called; its message (to the client and in the log) names the variables to set and
// never a value of one. (It was a 400, an invalid_request_error, as if the client had erred.)
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createGateway } from '../../examples/gateway/server.mjs';
import { AWS_ENV, chat, closeGateway, metricsAt, post, startGateway, type Running } from './support.js';

const AWS_VARS = ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_REGION', 'AWS_DEFAULT_REGION'];
const saved: Record<string, string | undefined> = {};
beforeAll(() => {
  for (const k of AWS_VARS) saved[k] = process.env[k];
});
afterAll(() => {
  for (const [k, v] of Object.entries(saved)) { if (v === undefined) delete process.env[k]; else process.env[k] = v; }
});
/** The gateway's environment: these AWS variables, and no other. */
function awsEnv(vars: Partial<typeof AWS_ENV>): void {
  for (const k of AWS_VARS) delete process.env[k];
  Object.assign(process.env, vars);
}

const NO_CREDENTIALS = 'the gateway cannot sign for its bedrock upstream: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set in its environment';
const NO_REGION = 'its region is not set: AWS_REGION (or AWS_DEFAULT_REGION) in its environment, or a bedrock-runtime.<region>.amazonaws.com upstream URL';

/** The warning of a gateway started with none of them. */
const STARTED_WITHOUT = `gateway: warning: ${NO_CREDENTIALS}; ${NO_REGION}: every request will fail (500) until it is set and the gateway restarted`;

describe('a bedrock upstream without AWS credentials or region', () => {
  let g: Running;
  let invoke: Running;
  beforeAll(async () => {
    awsEnv({});
    g = await startGateway({ upstreamFormat: 'bedrock' });
    invoke = await startGateway({ upstreamFormat: 'bedrock-invoke' });
  });
  afterAll(async () => {
    // (each gateway puts back the core's budget it found: the last started closes first)
    await invoke.close();
    expect(invoke.up.openSockets).toBe(0);
    await closeGateway(g);
  });

  test('none in the environment: the official clients get a 500 in their API\'s shape that names both variables and the region', async () => {
    awsEnv({});
    const message = `${NO_CREDENTIALS}; ${NO_REGION}`;
    const openai = new OpenAI({ baseURL: `${g.url}/v1`, apiKey: 'test-key', maxRetries: 0, timeout: 20_000 });
    const e = await openai.chat.completions.create({ model: 'probe', messages: [{ role: 'user', content: 'x' }] }).catch((x: unknown) => x) as InstanceType<typeof OpenAI.APIError>;
    expect(e).toBeInstanceOf(OpenAI.InternalServerError);
    const id = e.headers!.get('x-request-id')!;
    expect([e.status, e.error]).toEqual([500, { message: `gateway error (request id ${id}): ${message}`, type: 'gateway_error', code: 'ERR_GATEWAY' }]);
    expect(g.log.at(-1)).toBe(`gateway: request ${id}: 500: GatewayConfigError: ${message}`);

    const anthropic = new Anthropic({ baseURL: g.url, apiKey: 'test-key', maxRetries: 0, timeout: 20_000 });
    const a = await anthropic.messages.create({ model: 'probe', max_tokens: 9, messages: [{ role: 'user', content: 'x' }] }).catch((x: unknown) => x) as InstanceType<typeof Anthropic.APIError>;
    expect(a).toBeInstanceOf(Anthropic.InternalServerError);
    const aid = a.headers!.get('x-request-id')!;
    expect([a.status, a.error]).toEqual([500, { type: 'error', error: { type: 'api_error', message: `gateway error (request id ${aid}): ${message}` } }]);
    expect(g.log.at(-1)).toBe(`gateway: request ${aid}: 500: GatewayConfigError: ${message}`);
    expect(g.up.received.length).toBe(0);
  });

  test('one of the two: the missing one named, and neither value written anywhere', async () => {
    awsEnv({ AWS_ACCESS_KEY_ID: AWS_ENV.AWS_ACCESS_KEY_ID, AWS_REGION: AWS_ENV.AWS_REGION });
    const r1 = await post(g.url, chat('probe'));
    const id1 = r1.headers['x-request-id'] as string;
    const m1 = 'the gateway cannot sign for its bedrock upstream: AWS_SECRET_ACCESS_KEY is not set in its environment';
    expect([r1.status, r1.headers['content-type'], JSON.parse(r1.body.toString())]).toEqual([500, 'application/json',
      { error: { message: `gateway error (request id ${id1}): ${m1}`, type: 'gateway_error', code: 'ERR_GATEWAY' } }]);
    expect(g.log.at(-1)).toBe(`gateway: request ${id1}: 500: GatewayConfigError: ${m1}`);

    awsEnv({ AWS_SECRET_ACCESS_KEY: AWS_ENV.AWS_SECRET_ACCESS_KEY, AWS_REGION: AWS_ENV.AWS_REGION });
    const r2 = await post(g.url, { ...chat('probe', false), max_tokens: 9 }, '/v1/messages');
    const id2 = r2.headers['x-request-id'] as string;
    const m2 = 'the gateway cannot sign for its bedrock upstream: AWS_ACCESS_KEY_ID is not set in its environment';
    expect([r2.status, JSON.parse(r2.body.toString())]).toEqual([500, { type: 'error', error: { type: 'api_error', message: `gateway error (request id ${id2}): ${m2}` } }]);
    expect(g.log.at(-1)).toBe(`gateway: request ${id2}: 500: GatewayConfigError: ${m2}`);

    for (const text of [r1.body.toString(), r2.body.toString(), ...g.log]) {
      expect(text).not.toContain(AWS_ENV.AWS_SECRET_ACCESS_KEY);
      expect(text).not.toContain(AWS_ENV.AWS_ACCESS_KEY_ID);
    }
    expect(g.up.received.length).toBe(0);
  });

  test('bedrock-invoke with its credentials but no region (a base URL that does not name one): the region named', async () => {
    awsEnv({ AWS_ACCESS_KEY_ID: AWS_ENV.AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY: AWS_ENV.AWS_SECRET_ACCESS_KEY });
    const res = await post(invoke.url, { ...chat('probe'), max_tokens: 9 }, '/v1/messages');
    const id = res.headers['x-request-id'] as string;
    const message = `the gateway cannot sign for its bedrock upstream: ${NO_REGION}`;
    expect([res.status, JSON.parse(res.body.toString())]).toEqual([500, { type: 'error', error: { type: 'api_error', message: `gateway error (request id ${id}): ${message}` } }]);
    expect(invoke.log).toEqual([STARTED_WITHOUT, `gateway: request ${id}: 500: GatewayConfigError: ${message}`]);
    expect(invoke.up.received.length).toBe(0);
  });

  test('said when the gateway starts: a warning naming what is missing, and none with everything set (or the region in the URL)', async () => {
    expect([g.log[0], invoke.log[0]]).toEqual([STARTED_WITHOUT, STARTED_WITHOUT]);
    const started = async (vars: Partial<typeof AWS_ENV>, upstream?: string): Promise<string[]> => {
      awsEnv(vars);
      const log: string[] = [];
      // (closed at once: each gateway sets the core's budget for its life and puts back the one it found)
      await createGateway({ upstream: upstream ?? g.up.url, upstreamFormat: 'bedrock', log: (line) => log.push(line) }).close();
      return log;
    };
    expect(await started(AWS_ENV)).toEqual([]);
    const { AWS_REGION: _region, ...credentials } = AWS_ENV;
    expect(await started(credentials)).toEqual([`gateway: warning: the gateway cannot sign for its bedrock upstream: ${NO_REGION}: every request will fail (500) until it is set and the gateway restarted`]);
    // (a bedrock-runtime.<region>.amazonaws.com URL names the region)
    expect(await started(credentials, 'https://bedrock-runtime.eu-west-1.amazonaws.com')).toEqual([]);
    const { AWS_SECRET_ACCESS_KEY: _secret, ...noSecret } = AWS_ENV;
    expect(await started(noSecret)).toEqual(['gateway: warning: the gateway cannot sign for its bedrock upstream: AWS_SECRET_ACCESS_KEY is not set in its environment: every request will fail (500) until it is set and the gateway restarted']);
  });

  test('the metrics: each a gateway error and a failed stream, none the provider\'s', async () => {
    const wanted = (n: number) => ({
      gateway_errors_total: n,
      'llm_streams_total{status="done"}': 0, 'llm_streams_total{status="truncated"}': 0, 'llm_streams_total{status="failed"}': n,
      'llm_streams_total{status="limit"}': 0, 'llm_streams_total{status="aborted"}': 0,
      'llm_provider_errors_total{source="status"}': 0, 'llm_provider_errors_total{source="stream"}': 0,
      'llm_provider_errors_total{source="connect"}': 0, 'llm_provider_errors_total{source="body"}': 0,
    });
    const counted = async (r: Running) => Object.fromEntries([...await metricsAt(`${r.url}/metrics`)].filter(([k]) => /^(gateway_errors_total|llm_streams_total|llm_provider_errors_total)/.test(k)));
    expect(await counted(g)).toEqual(wanted(4));
    expect(await counted(invoke)).toEqual(wanted(1));
  });
});
