/**
 * Answers the server's `vlt/editor.chatModels` and `vlt/editor.chat` requests with VS Code's
 * Language Model API (`vscode.lm`: Copilot and whatever else provides models), so that the
 * engine's oracle can write its answers with the user's editor models. The editor owns consent
 * (its prompt appears on a model's first use, with our justification), quotas and the models'
 * availability; every refusal comes back to the server as an answer with a reason, never as a
 * thrown error, and the server degrades to the evidence brief saying why.
 */
import * as vscode from 'vscode';
import type { BaseLanguageClient } from 'vscode-languageclient';
import {
  editorChatDeltaNotification,
  editorChatModelsRequest,
  editorChatRequest,
  type EditorAnswer,
  type EditorChatMessage,
  type EditorChatModelInfo,
  type EditorChatParams,
  type EditorChatResult,
} from '../protocol/lsp';
import { errorMessage } from './errors';

export function registerLanguageModels(client: BaseLanguageClient, log: vscode.LogOutputChannel): vscode.Disposable[] {
  return [client.onRequest(editorChatModelsRequest, () => listModels(log)), client.onRequest(editorChatRequest, (p, token) => chat(client, log, p, token))];
}

async function listModels(log: vscode.LogOutputChannel): Promise<EditorAnswer<EditorChatModelInfo[]>> {
  try {
    const models = await vscode.lm.selectChatModels();
    log.info(`language models in the editor: ${models.map((m) => `${m.vendor}/${m.name}`).join(', ') || 'none'}`);
    return { ok: true, value: models.map((m) => ({ id: m.id, name: m.name, vendor: m.vendor, family: m.family, maxInputTokens: m.maxInputTokens })), server: 'vscode.lm' };
  } catch (e) {
    return { ok: false, reason: `the editor could not list its language models: ${messageOf(e)}` };
  }
}

async function chat(client: BaseLanguageClient, log: vscode.LogOutputChannel, p: EditorChatParams, token: vscode.CancellationToken): Promise<EditorAnswer<EditorChatResult>> {
  const [model] = await vscode.lm.selectChatModels({ id: p.model });
  if (!model) return { ok: false, reason: `the editor offers no model ${p.model} now` };
  const messages = toVscodeMessages(p.messages);
  const options: vscode.LanguageModelChatRequestOptions = {
    ...(p.justification ? { justification: p.justification } : {}),
    ...(p.tools?.length ? { tools: p.tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.parameters })), toolMode: vscode.LanguageModelChatToolMode.Auto } : {}),
  };
  let text = '';
  const toolCalls: EditorChatResult['toolCalls'] = [];
  try {
    const response = await model.sendRequest(messages, options, token);
    for await (const part of response.stream) {
      if (part instanceof vscode.LanguageModelTextPart) {
        text += part.value;
        await client.sendNotification(editorChatDeltaNotification, { requestId: p.requestId, text: part.value });
      } else if (part instanceof vscode.LanguageModelToolCallPart) {
        toolCalls.push({ id: part.callId, name: part.name, arguments: JSON.stringify(part.input) });
      }
    }
  } catch (e) {
    if (token.isCancellationRequested) return { ok: false, reason: 'cancelled' };
    const reason = refusalOf(e, model);
    log.warn(`language model ${model.name}: ${reason}`);
    return { ok: false, reason };
  }
  return { ok: true, value: { text, toolCalls, finishReason: toolCalls.length ? 'tool_calls' : 'stop', ...(await usageOf(model, messages, text, token)) }, server: `${model.vendor}/${model.name}` };
}

/**
 * The engine's messages in the API's two roles. The API has no system role: the system prompt
 * goes first as a user message, as VS Code's guide for language models advises. Tool results
 * are user messages holding a result part answered by call id.
 */
export function toVscodeMessages(messages: EditorChatMessage[]): vscode.LanguageModelChatMessage[] {
  return messages.map((m) => {
    switch (m.role) {
      case 'system':
      case 'user':
        return vscode.LanguageModelChatMessage.User(m.content);
      case 'assistant': {
        const parts: Array<vscode.LanguageModelTextPart | vscode.LanguageModelToolCallPart> = m.content ? [new vscode.LanguageModelTextPart(m.content)] : [];
        for (const c of m.toolCalls ?? []) parts.push(new vscode.LanguageModelToolCallPart(c.id, c.name, parseArguments(c.arguments)));
        return vscode.LanguageModelChatMessage.Assistant(parts);
      }
      case 'tool':
        return vscode.LanguageModelChatMessage.User([new vscode.LanguageModelToolResultPart(m.toolCallId, [new vscode.LanguageModelTextPart(m.content)])]);
    }
  });
}

function parseArguments(json: string): object {
  try {
    const v: unknown = JSON.parse(json);
    return v !== null && typeof v === 'object' ? v : {};
  } catch {
    return {};
  }
}

/** What a refusal means to the user: the API's error codes in words. */
function refusalOf(e: unknown, model: vscode.LanguageModelChat): string {
  if (e instanceof vscode.LanguageModelError) {
    switch (e.code) {
      case 'NoPermissions':
        return `NoPermissions: Vlt Oracle may not use ${model.name} (the consent prompt was declined or not shown); allow it under the Accounts menu's "Manage Language Model Access"`;
      case 'Blocked':
        return `Blocked: ${model.name} refused the request (quota or rate limit)`;
      case 'NotFound':
        return `NotFound: the editor no longer offers ${model.name}`;
      default:
        return `${e.code || 'LanguageModelError'}: ${e.message}`;
    }
  }
  return messageOf(e);
}

/** The API reports no usage: the model's own token counts of the request and the reply. */
async function usageOf(model: vscode.LanguageModelChat, messages: vscode.LanguageModelChatMessage[], text: string, token: vscode.CancellationToken): Promise<{ usage?: EditorChatResult['usage'] }> {
  try {
    const prompt = (await Promise.all(messages.map((m) => model.countTokens(m, token)))).reduce((a, b) => a + b, 0);
    const completion = text ? await model.countTokens(text, token) : 0;
    return { usage: { promptTokens: prompt, completionTokens: completion, totalTokens: prompt + completion } };
  } catch {
    return {};
  }
}

function messageOf(e: unknown): string {
  return errorMessage(e);
}
