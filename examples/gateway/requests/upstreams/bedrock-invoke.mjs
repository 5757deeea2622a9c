// An Anthropic client → a bedrock-invoke upstream, Claude on Bedrock
// (`POST {base}/model/{model}/invoke-with-response-stream`, signed: ../bedrock-signing.mjs): its body
// as it sent it, in Bedrock's few words of its own (invokeFromMessages). An OpenAI client's is
// written as for an anthropic upstream (anthropic.mjs), in Bedrock's words too; both in the
// upstream's description (bedrockInvoke).
import { RequestError } from '../errors.mjs';
import { bedrockSigner } from '../bedrock-signing.mjs';
import { given, isObject, modelInPath, modelOf } from '../content.mjs';
import { anthropicParams, toAnthropic } from './anthropic.mjs';

/** Why an Anthropic client's field is not carried to Claude on Bedrock, where it changes the answer: refused. */
const NOT_ON_BEDROCK = {
  inference_geo: 'it says where Anthropic runs the model',
  container: 'it names a container of Anthropic\'s code execution tool, which Bedrock does not run',
  mcp_servers: 'it names servers for Anthropic\'s MCP connector, which Bedrock does not call',
};

/**
 * An Anthropic client's request for Claude on Bedrock (InvokeModel's body for Claude is
 * Anthropic's Messages body): carried as the body it is, as the anthropic upstream carries it,
 * not through OpenAI Chat's form, which would lose what both APIs share (the thinking and
 * redacted_thinking blocks of the history, which Claude wants back before their turn's tool_use
 * when it thinks; cache_control on blocks, tools and system; a tool_result's is_error; documents;
 * a system prompt of blocks; tools as defined). Bedrock's own words: no `model` (it is in the
 * path) nor `stream` (so is that), and `anthropic_version: "bedrock-2023-05-31"`. The client's
 * anthropic-beta header is not carried (as `anthropic_beta`): Bedrock refuses a request with a beta
 * flag it does not take ("invalid beta flag", a 400), which flags it takes differs from model to
 * model (Opus 4.7 takes interleaved thinking's alone), and Claude Code sends Anthropic's own
 * (`claude-code-20250219`, the MCP connector's, …) on every turn: carried, they refused every turn.
 * So are the fields that need a beta to be taken: context_management (ignored, as for another
 * upstream: the provider's own trimming of a long conversation). Left out too: the fields of
 * Anthropic's API that Bedrock's body for Claude does not take and that change nothing in the
 * answer (below, each with its reason); refused: those that do (NOT_ON_BEDROCK). Anything else
 * passes as it was sent, for Bedrock to take or refuse.
 */
function invokeFromMessages(body) {
  const out = {};
  let format;
  for (const [k, v] of Object.entries(body)) {
    switch (k) {
      case 'model': case 'stream':
        break; // (both in the path: the model's id, and invoke-with-response-stream)
      case 'anthropic_version': case 'anthropic_beta':
        // (Anthropic's API has them as headers, not in its body: the gateway writes Bedrock's)
        if (given(v) !== undefined) throw new RequestError(`${k} is not a field of Anthropic's Messages API: the gateway writes Bedrock's anthropic_version, and no beta flags`);
        break;
      // metadata.user_id: an id of the end user for Anthropic's abuse detection; service_tier and
      // speed: the capacity and the speed the answer is made with (Bedrock's are its own
      // settings, not the body's); cache_control (the request's, apart from its blocks', which
      // are carried) and diagnostics: prompt caching, and why it missed. None changes the answer,
      // and Bedrock documents none of them in its body for Claude (where it refuses a field it
      // does not take): left out, as Claude Code sends metadata on every turn
      case 'metadata': case 'service_tier': case 'speed': case 'cache_control': case 'diagnostics':
      case 'context_management': // (under its beta, which is not carried: above)
        break;
      case 'output_format': // (the beta's name of output_config.format, which is Bedrock's word for it)
        format = given(v);
        break;
      default:
        if (NOT_ON_BEDROCK[k] !== undefined) {
          if (given(v) !== undefined) throw new RequestError(`${k} cannot be carried to the bedrock-invoke upstream: ${NOT_ON_BEDROCK[k]}`);
        } else out[k] = v;
    }
  }
  if (format !== undefined) {
    const config = given(out.output_config);
    if (config !== undefined && !isObject(config)) throw new RequestError('output_config must be an object');
    if (given(config?.format) !== undefined) throw new RequestError('output_format and output_config.format cannot both be given: they are one field');
    out.output_config = { ...config, format };
  }
  return { anthropic_version: 'bedrock-2023-05-31', ...out };
}

/**
 * The bedrock-invoke upstream (index.mjs reads its description): the model in its path, signed as
 * the bedrock upstream is. Its body is Anthropic's Messages body, without model and stream, with
 * Bedrock's anthropic_version: an Anthropic client's as it sent it (invokeFromMessages), an OpenAI
 * client's written as the anthropic upstream's is, with its parameters.
 */
export const bedrockInvoke = {
  dialect: 'anthropic',
  asSent: invokeFromMessages,
  path: (chat) => `/model/${modelInPath(modelOf(chat, 'a bedrock upstream needs a model id'))}/invoke-with-response-stream`,
  sign: bedrockSigner,
  body(chat, messages, settings) {
    const { model: _model, stream: _stream, ...messagesBody } = toAnthropic(chat, messages, settings);
    return { anthropic_version: 'bedrock-2023-05-31', ...messagesBody };
  },
  params: anthropicParams,
};
