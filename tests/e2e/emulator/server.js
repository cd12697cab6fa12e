#!/usr/bin/env node
/*
 * hearth's Telegram Bot API emulator for end-to-end tests.
 *
 * Install:  npm ci --prefix tests/e2e/emulator
 * Run:      node tests/e2e/emulator/server.js [--port N] [--host H] [--parent-pipe]
 *           (PORT / HOST from the environment work too; port 0 picks a free port.)
 * It prints exactly one line, `READY <port>`, on stdout once it listens; logs go to stderr.
 * With --parent-pipe it exits when its stdin closes, so a crashed test run leaves no orphan.
 * BOT_USERNAME / BOT_FIRST_NAME set what getMe answers (default hearth_test_bot / Hearth).
 *
 * Why this file exists: `telegram-test-api` 4.2.1 (pinned in package.json) is the emulator, but
 * python-telegram-bot 22.8 cannot talk to it as shipped. The package has no start script, and
 * its server builds its Express routes from the exported `routes` array
 * (`telegram-test-api/lib/routes/index`) inside the constructor, so this script puts its own
 * routes at the FRONT of that array before constructing the server. Nothing in node_modules is
 * edited. The patches:
 *
 *  Bot API side (`/bot<token>/<method>`, one dispatcher ahead of every built-in bot route):
 *  - getMe answers a full User: `is_bot: true`, first_name, username, can_join_groups, ...
 *    (the built-in lacks `is_bot`, so PTB's initialize() raises).
 *  - sendMessage answers a real Message: `date` in SECONDS (built-in: milliseconds), `from` the
 *    bot, a proper `chat` (private / group / supergroup, as the client announced it), `text`,
 *    `entities`, inline `reply_markup`, and `reply_to_message` when it quotes a user message.
 *    Empty and over-long (> 4096) texts are refused with 400 as Telegram does.
 *  - editMessageText / editMessageReplyMarkup / editMessageCaption answer the edited Message
 *    (built-in: null, PTB raises), drop the keyboard when none is sent (as Telegram does),
 *    and answer 400 "message is not modified" / "message to edit not found" like Telegram.
 *  - getUpdates honours `offset` (an update stays pending until a later offset confirms it),
 *    `limit`, `allowed_updates`, and long-polls up to `timeout` s (built-in: ignores them all and
 *    answers at once). Polling with a small poll_interval still works.
 *  - new methods that answered 500: sendChatAction (recorded), setMyCommands /
 *    getMyCommands / deleteMyCommands (validated and stored per scope + language),
 *    answerCallbackQuery (recorded, answers true), deleteWebhook / setWebhook /
 *    getWebhookInfo, getChat (a ChatFullInfo), sendDocument (multipart upload parsed here; file
 *    name and bytes are kept), getFile + `/file/bot<token>/<path>` downloads, deleteMessage, and
 *    the set-and-forget setters setMyDescription / setMyShortDescription / setMyName /
 *    setChatMenuButton.
 *  - every other method answers HTTP 400 `{ok:false, error_code:400, description}` (the built-in
 *    answers 500, which PTB treats as network trouble and retries).
 *  Every message the bot sends is stored through the built-in `addBotMessage`, so the client
 *  routes `/getUpdates` and `/getUpdatesHistory` see them; each stored entry also carries
 *  `method` and `result` (the Message exactly as the bot got it back, updated on edits).
 *
 *  Client side (POST, JSON, ahead of the built-in client routes):
 *  - /sendMessage, /sendCommand, /sendCallback answer `{ok, result: {update_id, message_id}}`
 *    and remember each chat so the bot's messages get the right `chat` object; /sendCallback
 *    takes `chat_id` + `message_id` of a bot message and builds a full callback_query with
 *    `chat_instance` (the built-in sends neither a usable message nor chat_instance).
 *  - /sendUpdate `{botToken, update}` queues any update as is (edited_message, stickers,
 *    photos, my_chat_member, ...); the built-in server can only queue message / callback_query.
 *  - /uploadFile `{botToken?, file_name, mime_type, content_base64}` stores a file the user
 *    "sent" and answers its file_id, so the bot can getFile and download it.
 *  - /getDocuments, /getChatActions, /getMyCommands, /getCallbackAnswers `{token, chatId?}`
 *    read back what the bot did. /getUpdates and /getUpdatesHistory are the built-in ones.
 *  The bot-side formatting of queued updates (TelegramServer.formatUpdate) is replaced so that
 *  callback queries carry chat_instance, raw updates pass through, and the client's `botToken`
 *  field is not leaked into the Message the bot sees.
 *
 *  Process: `unhandledRejection` / `uncaughtException` are logged to stderr instead of killing
 *  node (node 20 dies on an un-awaited rejection, e.g. when a webhook target is down), the
 *  message store keeps messages for a day (built-in: 60 s), and SIGTERM/SIGINT exit cleanly.
 */

'use strict';

const crypto = require('crypto');
const path = require('path');

const TelegramServer = require('telegram-test-api');
const { routes } = require('telegram-test-api/lib/routes/index');

// express is telegram-test-api's dependency; resolve it from there, not from our own manifest.
const express = require(require.resolve('express', {
  paths: [path.dirname(require.resolve('telegram-test-api'))],
}));

process.on('unhandledRejection', (reason) => {
  process.stderr.write(`[emulator] unhandled rejection: ${reason && reason.stack ? reason.stack : reason}\n`);
});
process.on('uncaughtException', (error) => {
  process.stderr.write(`[emulator] uncaught exception: ${error && error.stack ? error.stack : error}\n`);
});

// ---------------------------------------------------------------------------------------------
// Configuration

function argValue(name) {
  const index = process.argv.indexOf(name);
  return index >= 0 ? process.argv[index + 1] : undefined;
}

const PORT = Number(argValue('--port') ?? process.env.PORT ?? 0);
const HOST = argValue('--host') ?? process.env.HOST ?? '127.0.0.1';
const PARENT_PIPE = process.argv.includes('--parent-pipe');
const BOT_USERNAME = process.env.BOT_USERNAME || 'hearth_test_bot';
const BOT_FIRST_NAME = process.env.BOT_FIRST_NAME || 'Hearth';
const TEXT_LIMIT = 4096;
const CAPTION_LIMIT = 1024;
const CHAT_ACTIONS = new Set([
  'typing', 'upload_photo', 'record_video', 'upload_video', 'record_voice', 'upload_voice',
  'upload_document', 'choose_sticker', 'find_location', 'record_video_note', 'upload_video_note',
]);
const UPDATE_TYPES_BY_DEFAULT_EXCLUDED = new Set(['chat_member', 'message_reaction', 'message_reaction_count']);

if (!Number.isInteger(PORT) || PORT < 0 || PORT > 65535) {
  process.stderr.write(`[emulator] bad port: ${PORT}\n`);
  process.exit(2);
}

// ---------------------------------------------------------------------------------------------
// State kept next to telegram-test-api's own storage

const extra = {
  chats: new Map(), // chat id (string) -> Chat object, as the client announced it
  chatActions: [], // {token, chat_id, action, time}
  commands: new Map(), // token -> Map(scopeKey -> [BotCommand])
  callbackAnswers: [], // {token, callback_query_id, text, show_alert, url, cache_time}
  files: new Map(), // file_id -> {file_id, file_unique_id, file_name, mime_type, content, sent: [{token, chat_id, message_id, caption}]}
  settings: new Map(), // `${token} ${method}` -> params
  waiters: new Set(), // long-polling getUpdates waiting for a user update
  botWaiters: new Set(), // client calls to /waitBotMessages waiting for the bot to send
};

let fileCounter = 1;

function nowSeconds() {
  return Math.floor(Date.now() / 1000);
}

function botIdFor(token) {
  const prefix = String(token).split(':')[0];
  return /^\d+$/.test(prefix) ? Number(prefix) : 666;
}

function botUser(token) {
  return { id: botIdFor(token), is_bot: true, first_name: BOT_FIRST_NAME, username: BOT_USERNAME };
}

function chatFor(chatId) {
  const known = extra.chats.get(String(chatId));
  if (known) return { ...known };
  const id = Number(chatId);
  if (id < 0) {
    const type = id <= -1000000000000 ? 'supergroup' : 'group';
    return { id, type, title: `Chat ${id}` };
  }
  return { id, type: 'private', first_name: `User ${id}` };
}

function rememberChat(chat) {
  if (chat && chat.id !== undefined && chat.type) {
    extra.chats.set(String(chat.id), { ...chat });
  }
}

function wakeWaiters() {
  for (const wake of [...extra.waiters]) wake();
}

// Milliseconds on this process's clock, finer than Date.now (benchmarks time turns with it).
function nowMs() {
  return performance.timeOrigin + performance.now();
}

// ---------------------------------------------------------------------------------------------
// Parameters: PTB sends application/x-www-form-urlencoded (or multipart) with JSON-encoded
// values for anything that is not a string; other clients may send JSON bodies.

class ApiError extends Error {
  constructor(description, errorCode = 400) {
    super(description);
    this.errorCode = errorCode;
  }
}

function parseJsonParam(value) {
  if (value === undefined || value === null || typeof value !== 'string') return value;
  try {
    return JSON.parse(value);
  } catch (_error) {
    throw new ApiError(`Bad Request: can't parse JSON parameter: ${value.slice(0, 80)}`);
  }
}

function intParam(value, fallback) {
  if (value === undefined || value === null || value === '') return fallback;
  const number = Number(value);
  if (!Number.isFinite(number)) throw new ApiError(`Bad Request: expected a number, got ${value}`);
  return Math.trunc(number);
}

function boolParam(value) {
  return value === true || value === 'true' || value === '1' || value === 1;
}

function requireParam(params, name) {
  const value = params[name];
  if (value === undefined || value === null || value === '') {
    throw new ApiError(`Bad Request: ${name} is empty`);
  }
  return value;
}

function visibleLength(text, parseMode) {
  let visible = String(text);
  if (parseMode && String(parseMode).toLowerCase() === 'html') {
    visible = visible.replace(/<[^>]*>/g, '').replace(/&(lt|gt|amp|quot|#\d+|#x[0-9a-f]+);/gi, '_');
  } else if (parseMode) {
    return 0; // Markdown: cannot tell what is markup, do not guess
  }
  return [...visible].length;
}

function checkText(text, parseMode, limit, what) {
  if (visibleLength(text, parseMode) > limit) {
    throw new ApiError(`Bad Request: ${what} is too long`);
  }
}

function inlineMarkup(rawMarkup) {
  const markup = parseJsonParam(rawMarkup);
  return markup && typeof markup === 'object' && 'inline_keyboard' in markup ? markup : undefined;
}

// A tiny multipart/form-data parser (PTB uploads files with httpx's multipart encoder).
function parseMultipart(buffer, contentType) {
  const match = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(contentType || '');
  if (!match) throw new ApiError('Bad Request: multipart body without boundary');
  const delimiter = Buffer.from(`--${match[1] || match[2]}`);
  const fields = {};
  const files = {};
  let start = buffer.indexOf(delimiter);
  while (start >= 0) {
    let partStart = start + delimiter.length;
    if (buffer.slice(partStart, partStart + 2).toString() === '--') break; // closing delimiter
    partStart += 2; // CRLF after the delimiter
    const next = buffer.indexOf(delimiter, partStart);
    if (next < 0) break;
    const part = buffer.slice(partStart, next - 2); // strip the CRLF before the next delimiter
    const headerEnd = part.indexOf('\r\n\r\n');
    if (headerEnd >= 0) {
      const headers = part.slice(0, headerEnd).toString('utf8');
      const body = part.slice(headerEnd + 4);
      const name = /name="((?:[^"\\]|\\.)*)"/i.exec(headers);
      const filename = /filename="((?:[^"\\]|\\.)*)"/i.exec(headers);
      const type = /content-type:\s*([^\r\n]+)/i.exec(headers);
      if (name) {
        const key = name[1].replace(/%22/g, '"').replace(/\\(.)/g, '$1');
        if (filename) {
          files[key] = {
            filename: filename[1].replace(/%22/g, '"').replace(/\\(.)/g, '$1'),
            mimeType: type ? type[1].trim() : 'application/octet-stream',
            content: Buffer.from(body),
          };
        } else {
          fields[key] = body.toString('utf8');
        }
      }
    }
    start = next;
  }
  return { fields, files };
}

// ---------------------------------------------------------------------------------------------
// Storage helpers built on telegram-test-api's own storage

function findBotEntry(server, token, chatId, messageId) {
  return server.storage.botMessages.find((entry) => entry.botToken === token
    && String(entry.message.chat_id) === String(chatId)
    && String(entry.messageId) === String(messageId));
}

function findUserMessage(server, token, chatId, messageId) {
  for (const entry of server.storage.userMessages) {
    if (entry.botToken !== token) continue;
    const formatted = TelegramServer.formatUpdate(entry);
    const message = formatted.message || formatted.edited_message;
    if (message && message.chat && String(message.chat.id) === String(chatId)
        && String(message.message_id) === String(messageId)) {
      return message;
    }
  }
  return undefined;
}

// Store a bot message the way the built-in sendMessage does (so the client routes see it),
// then attach the Message the bot gets back.
function storeBotMessage(server, token, method, params, fields) {
  const before = server.storage.botMessages.length;
  server.addBotMessage(params, token);
  const entry = server.storage.botMessages[before];
  const chatId = params.chat_id;
  const result = {
    message_id: entry.messageId,
    from: botUser(token),
    chat: chatFor(chatId),
    date: nowSeconds(),
    ...fields,
  };
  const replyParameters = parseJsonParam(params.reply_parameters);
  const replyTo = replyParameters ? replyParameters.message_id : params.reply_to_message_id;
  if (replyTo !== undefined && replyTo !== null) {
    const quoted = findBotEntry(server, token, chatId, replyTo);
    const original = quoted ? quoted.result : findUserMessage(server, token, chatId, replyTo);
    if (original) result.reply_to_message = original;
  }
  const markup = inlineMarkup(params.reply_markup);
  if (markup) result.reply_markup = markup;
  entry.method = method;
  entry.result = result;
  entry.receivedMs = nowMs();
  for (const wake of [...extra.botWaiters]) wake();
  return result;
}

// ---------------------------------------------------------------------------------------------
// Bot API methods. Each takes (server, token, params, req, res) and returns a result, or
// undefined when it has answered `res` itself (a long poll that is still waiting).

function getUpdates(server, token, params, _req, res) {
  const offset = intParam(params.offset, 0);
  const limit = Math.min(Math.max(intParam(params.limit, 100), 1), 100);
  const timeout = Math.min(Math.max(intParam(params.timeout, 0), 0), 50);
  const allowedRaw = parseJsonParam(params.allowed_updates);
  const allowed = Array.isArray(allowedRaw) && allowedRaw.length ? new Set(allowedRaw) : null;

  const mine = () => server.storage.userMessages
    .filter((entry) => entry.botToken === token && !entry.isRead)
    .sort((a, b) => a.updateId - b.updateId);

  // Confirm what the bot has seen: everything below `offset` (negative: keep the last -offset).
  let pendingEntries = mine();
  if (offset > 0) {
    for (const entry of pendingEntries) if (entry.updateId < offset) entry.isRead = true;
  } else if (offset < 0) {
    pendingEntries.slice(0, Math.max(pendingEntries.length + offset, 0))
      .forEach((entry) => { entry.isRead = true; });
  }

  const collect = () => {
    const out = [];
    for (const entry of mine()) {
      const update = TelegramServer.formatUpdate(entry);
      const kind = Object.keys(update).find((key) => key !== 'update_id');
      const wanted = allowed ? allowed.has(kind) : !UPDATE_TYPES_BY_DEFAULT_EXCLUDED.has(kind);
      if (!wanted) {
        entry.isRead = true;
        continue;
      }
      out.push(update);
      if (out.length >= limit) break;
    }
    return out;
  };

  pendingEntries = collect();
  if (pendingEntries.length || timeout === 0) return pendingEntries;

  // Long poll: answer as soon as an update for this bot arrives, or with [] after `timeout` s.
  let finished = false;
  let timer = null;
  const settle = () => {
    finished = true;
    extra.waiters.delete(wake);
    clearTimeout(timer);
  };
  const answer = (updates) => {
    settle();
    if (!res.writableEnded && !res.destroyed) res.status(200).json({ ok: true, result: updates });
  };
  const wake = () => {
    if (finished) return;
    const updates = collect();
    if (updates.length) answer(updates);
  };
  extra.waiters.add(wake);
  timer = setTimeout(() => { if (!finished) answer(collect()); }, timeout * 1000);
  res.on('close', settle);
  return undefined;
}

function sendMessage(server, token, params) {
  requireParam(params, 'chat_id');
  const text = params.text === undefined || params.text === null ? '' : String(params.text);
  if (!text.trim()) throw new ApiError('Bad Request: message text is empty');
  checkText(text, params.parse_mode, TEXT_LIMIT, 'message');
  const fields = { text };
  const entities = parseJsonParam(params.entities);
  if (entities) fields.entities = entities;
  return storeBotMessage(server, token, 'sendMessage', params, fields);
}

function editedEntry(server, token, params) {
  if (params.inline_message_id) {
    throw new ApiError('Bad Request: inline messages are not emulated');
  }
  requireParam(params, 'chat_id');
  requireParam(params, 'message_id');
  const entry = findBotEntry(server, token, params.chat_id, params.message_id);
  if (!entry || !entry.result) throw new ApiError('Bad Request: message to edit not found');
  return entry;
}

// JSON with sorted keys, so that "not modified" does not depend on key order.
function canonical(value) {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value).sort().filter((key) => value[key] !== undefined)
      .map((key) => `${JSON.stringify(key)}:${canonical(value[key])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

function applyEdit(server, entry, params, changes) {
  const before = canonical({ ...entry.result, edit_date: undefined });
  const result = { ...entry.result, ...changes };
  for (const [key, value] of Object.entries(result)) if (value === undefined) delete result[key];
  const markup = inlineMarkup(params.reply_markup);
  if (markup) result.reply_markup = markup;
  else delete result.reply_markup;
  if (canonical({ ...result, edit_date: undefined }) === before) {
    throw new ApiError('Bad Request: message is not modified: specified new message content and'
      + ' reply markup are exactly the same as a current content and reply markup of the message');
  }
  result.edit_date = nowSeconds();
  entry.edits = (entry.edits || []).concat([entry.result]);
  entry.result = result;
  // Keep the built-in view (entry.message, what /getUpdates shows) in step, as its own edit does.
  const message = { ...entry.message, ...params };
  if (!markup) delete message.reply_markup;
  entry.message = TelegramServer.normalizeMessage(message);
}

function editMessageText(server, token, params) {
  const entry = editedEntry(server, token, params);
  if (entry.result.text === undefined) {
    throw new ApiError('Bad Request: there is no text in the message to edit');
  }
  const text = params.text === undefined || params.text === null ? '' : String(params.text);
  if (!text.trim()) throw new ApiError('Bad Request: message text is empty');
  checkText(text, params.parse_mode, TEXT_LIMIT, 'message');
  applyEdit(server, entry, params, { text, entities: parseJsonParam(params.entities) });
  server.emit('EditedMessageText');
  return entry.result;
}

function editMessageCaption(server, token, params) {
  const entry = editedEntry(server, token, params);
  if (entry.result.text !== undefined) {
    throw new ApiError('Bad Request: there is no caption in the message to edit');
  }
  const caption = params.caption === undefined || params.caption === null ? undefined : String(params.caption);
  if (caption !== undefined) checkText(caption, params.parse_mode, CAPTION_LIMIT, 'message caption');
  applyEdit(server, entry, params, { caption, caption_entities: parseJsonParam(params.caption_entities) });
  server.emit('EditedMessageText');
  return entry.result;
}

function editMessageReplyMarkup(server, token, params) {
  const entry = editedEntry(server, token, params);
  applyEdit(server, entry, params, {});
  server.emit('EditedMessageReplyMarkup');
  return entry.result;
}

function deleteMessage(server, token, params) {
  requireParam(params, 'chat_id');
  requireParam(params, 'message_id');
  const entry = findBotEntry(server, token, params.chat_id, params.message_id);
  if (entry) {
    server.removeBotMessage(entry.updateId);
    return true;
  }
  const before = server.storage.userMessages.length;
  server.storage.userMessages = server.storage.userMessages.filter((update) => !(
    update.botToken === token && update.message && update.message.chat
    && String(update.message.chat.id) === String(params.chat_id)
    && String(update.messageId) === String(params.message_id)));
  if (server.storage.userMessages.length === before) {
    throw new ApiError('Bad Request: message to delete not found');
  }
  return true;
}

function sendDocument(server, token, params, req) {
  requireParam(params, 'chat_id');
  let stored;
  const upload = req.uploadedFiles && req.uploadedFiles.document;
  if (upload) {
    const fileId = `emu-doc-${fileCounter}-${crypto.randomBytes(6).toString('hex')}`;
    fileCounter += 1;
    stored = {
      file_id: fileId,
      file_unique_id: crypto.createHash('sha1').update(upload.content).digest('hex').slice(0, 16),
      file_name: upload.filename,
      mime_type: upload.mimeType,
      content: upload.content,
    };
    extra.files.set(fileId, stored);
  } else if (typeof params.document === 'string' && extra.files.has(params.document)) {
    stored = extra.files.get(params.document);
  } else {
    throw new ApiError('Bad Request: wrong file identifier/HTTP URL specified');
  }
  const caption = params.caption === undefined || params.caption === null ? undefined : String(params.caption);
  if (caption !== undefined) checkText(caption, params.parse_mode, CAPTION_LIMIT, 'message caption');
  const document = {
    file_id: stored.file_id,
    file_unique_id: stored.file_unique_id,
    file_name: stored.file_name,
    mime_type: stored.mime_type,
    file_size: stored.content.length,
  };
  const fields = { document };
  if (caption !== undefined) fields.caption = caption;
  const captionEntities = parseJsonParam(params.caption_entities);
  if (captionEntities) fields.caption_entities = captionEntities;
  // The stored params (entry.message) get the document's metadata, not its bytes.
  const storedParams = { ...params, document: { ...document } };
  const result = storeBotMessage(server, token, 'sendDocument', storedParams, fields);
  if (!stored.sent) stored.sent = [];
  stored.sent.push({ token, chat_id: String(params.chat_id), message_id: result.message_id, caption });
  return result;
}

function getFile(_server, _token, params) {
  const fileId = requireParam(params, 'file_id');
  const stored = extra.files.get(String(fileId));
  if (!stored) throw new ApiError('Bad Request: invalid file_id');
  return {
    file_id: stored.file_id,
    file_unique_id: stored.file_unique_id,
    file_size: stored.content.length,
    file_path: `files/${stored.file_id}/${encodeURIComponent(stored.file_name || 'file')}`,
  };
}

function sendChatAction(_server, token, params) {
  requireParam(params, 'chat_id');
  const action = requireParam(params, 'action');
  if (!CHAT_ACTIONS.has(action)) throw new ApiError('Bad Request: wrong parameter action in request');
  extra.chatActions.push({ token, chat_id: String(params.chat_id), action, time: Date.now() });
  return true;
}

function scopeKey(params) {
  const scope = parseJsonParam(params.scope) || { type: 'default' };
  return JSON.stringify([scope, params.language_code || '']);
}

function setMyCommands(_server, token, params) {
  const commands = parseJsonParam(requireParam(params, 'commands'));
  if (!Array.isArray(commands) || commands.length > 100) {
    throw new ApiError('Bad Request: commands must be a list of at most 100 BotCommand');
  }
  for (const command of commands) {
    if (!command || !/^[a-z0-9_]{1,32}$/.test(String(command.command))) {
      throw new ApiError('Bad Request: BOT_COMMAND_INVALID');
    }
    const description = String(command.description ?? '');
    if (description.length < 1 || description.length > 256) {
      throw new ApiError('Bad Request: BOT_COMMAND_DESCRIPTION_INVALID');
    }
  }
  if (!extra.commands.has(token)) extra.commands.set(token, new Map());
  extra.commands.get(token).set(scopeKey(params), commands.map((c) => ({
    command: String(c.command), description: String(c.description),
  })));
  return true;
}

function getMyCommands(_server, token, params) {
  const byScope = extra.commands.get(token);
  return (byScope && byScope.get(scopeKey(params))) || [];
}

function deleteMyCommands(_server, token, params) {
  const byScope = extra.commands.get(token);
  if (byScope) byScope.delete(scopeKey(params));
  return true;
}

function answerCallbackQuery(_server, token, params) {
  const id = requireParam(params, 'callback_query_id');
  extra.callbackAnswers.push({
    token,
    callback_query_id: String(id),
    text: params.text,
    show_alert: boolParam(params.show_alert),
    url: params.url,
    cache_time: intParam(params.cache_time, 0),
  });
  return true;
}

function setWebhook(server, token, params) {
  requireParam(params, 'url');
  server.setWebhook({ ...params }, token);
  return true;
}

function deleteWebhook(server, token, params) {
  server.deleteWebhook(token);
  if (boolParam(params.drop_pending_updates)) {
    server.storage.userMessages.forEach((entry) => {
      if (entry.botToken === token) entry.isRead = true;
    });
  }
  return true;
}

function getWebhookInfo(server, token) {
  const webhook = server.webhooks[token];
  return {
    url: webhook ? webhook.url : '',
    has_custom_certificate: false,
    pending_update_count: server.storage.userMessages
      .filter((entry) => entry.botToken === token && !entry.isRead).length,
  };
}

function getChat(_server, _token, params) {
  const chat = chatFor(requireParam(params, 'chat_id'));
  return {
    ...chat,
    accent_color_id: 0,
    max_reaction_count: 11,
    accepted_gift_types: {
      unlimited_gifts: false,
      limited_gifts: false,
      unique_gifts: false,
      premium_subscription: false,
      gifts_from_channels: false,
    },
  };
}

function rememberSetting(method) {
  return (_server, token, params) => {
    extra.settings.set(`${token} ${method}`, { ...params });
    return true;
  };
}

const METHODS = new Map(Object.entries({
  getMe: (_server, token) => ({
    ...botUser(token),
    can_join_groups: true,
    can_read_all_group_messages: false,
    supports_inline_queries: false,
    can_connect_to_business: false,
    has_main_web_app: false,
  }),
  getUpdates,
  sendMessage,
  editMessageText,
  editMessageCaption,
  editMessageReplyMarkup,
  deleteMessage,
  sendDocument,
  getFile,
  sendChatAction,
  setMyCommands,
  getMyCommands,
  deleteMyCommands,
  answerCallbackQuery,
  setWebhook,
  deleteWebhook,
  getWebhookInfo,
  getChat,
  setMyDescription: rememberSetting('setMyDescription'),
  setMyShortDescription: rememberSetting('setMyShortDescription'),
  setMyName: rememberSetting('setMyName'),
  setChatMenuButton: rememberSetting('setChatMenuButton'),
  logOut: () => true,
  close: () => true,
}).map(([name, handler]) => [name.toLowerCase(), { name, handler }]));

const rawMultipart = express.raw({ type: 'multipart/form-data', limit: '60mb' });

function botRoutes(app, server) {
  app.all('/bot:token/:method', rawMultipart, (req, res) => {
    const method = METHODS.get(String(req.params.method).toLowerCase());
    const answerError = (description, code) => {
      res.status(code).json({ ok: false, error_code: code, description });
    };
    if (!method) {
      answerError(`Bad Request: method '${req.params.method}' is not emulated by hearth's`
        + ' telegram-test-api (see tests/e2e/emulator/server.js)', 400);
      return;
    }
    if (req.method !== 'GET' && req.method !== 'POST') {
      answerError(`Bad Request: HTTP method ${req.method} is not allowed`, 400);
      return;
    }
    try {
      let params = { ...req.query, ...(req.body && !Buffer.isBuffer(req.body) ? req.body : {}) };
      if (Buffer.isBuffer(req.body)) {
        const { fields, files } = parseMultipart(req.body, req.headers['content-type']);
        params = { ...req.query, ...fields };
        req.uploadedFiles = files;
      }
      const result = method.handler(server, req.params.token, params, req, res);
      if (result !== undefined) res.status(200).json({ ok: true, result });
    } catch (error) {
      if (error instanceof ApiError) {
        answerError(error.message, error.errorCode);
      } else {
        process.stderr.write(`[emulator] ${method.name} failed: ${error.stack || error}\n`);
        answerError(`Bad Request: emulator failed on ${method.name}: ${error.message}`, 400);
      }
    }
  });
}

function fileRoutes(app) {
  app.get('/file/bot:token/files/:fileId/:name', (req, res) => {
    const stored = extra.files.get(req.params.fileId);
    if (!stored) {
      res.status(404).json({ ok: false, error_code: 404, description: 'Not Found' });
      return;
    }
    res.status(200).type(stored.mime_type || 'application/octet-stream').send(stored.content);
  });
}

// ---------------------------------------------------------------------------------------------
// Client routes (the "user" side)

function clientRoutes(app, server) {
  const handle = (routePath, handler) => {
    app.post(routePath, async (req, res) => {
      try {
        const result = await handler(req.body || {});
        res.status(200).json({ ok: true, result });
      } catch (error) {
        const status = error instanceof ApiError ? error.errorCode : 500;
        res.status(status).json({ ok: false, error_code: status, description: String(error.message || error) });
      }
    });
  };
  const tokenOf = (body) => {
    const token = body.botToken || body.token;
    if (!token) throw new ApiError('the body must carry `botToken`');
    return String(token);
  };
  const userMessage = (body) => {
    tokenOf(body);
    if (!body.chat || body.chat.id === undefined || !body.chat.type) throw new ApiError('`chat` with id and type is required');
    if (!body.from || body.from.id === undefined) throw new ApiError('`from` with id is required');
    rememberChat(body.chat);
    return { ...body, date: body.date || nowSeconds() };
  };

  handle('/sendMessage', async (body) => {
    const message = userMessage(body);
    const ids = { update_id: server.updateId, message_id: server.messageId, queued_ms: nowMs() };
    await server.addUserMessage(message);
    wakeWaiters();
    return ids;
  });
  handle('/sendCommand', async (body) => {
    const message = userMessage(body);
    if (!Array.isArray(message.entities) || !message.entities.some((e) => e.type === 'bot_command')) {
      throw new ApiError('a command needs a `bot_command` entity');
    }
    const ids = { update_id: server.updateId, message_id: server.messageId };
    await server.addUserCommand(message);
    wakeWaiters();
    return ids;
  });
  handle('/sendCallback', async (body) => {
    const token = tokenOf(body);
    if (!body.from || body.from.id === undefined) throw new ApiError('`from` with id is required');
    let { message } = body;
    if (!message || message.message_id === undefined || message.date === undefined) {
      const chatId = body.chat_id ?? (message && message.chat && message.chat.id);
      const messageId = body.message_id ?? (message && message.message_id);
      const entry = findBotEntry(server, token, chatId, messageId);
      if (!entry || !entry.result) {
        throw new ApiError(`no bot message ${messageId} in chat ${chatId} to press a button on`);
      }
      message = entry.result;
    }
    const callbackId = server.callbackId;
    const ids = { update_id: server.updateId, callback_query_id: String(callbackId) };
    await server.addUserCallback({
      botToken: token,
      from: body.from,
      message,
      data: body.data,
      chat_instance: String(body.chat_instance || `ci${message.chat.id}`),
    });
    wakeWaiters();
    return ids;
  });
  handle('/sendUpdate', async (body) => {
    const token = tokenOf(body);
    const update = { ...(body.update || {}) };
    delete update.update_id;
    const kinds = Object.keys(update);
    if (kinds.length !== 1) throw new ApiError('`update` must have exactly one field besides update_id');
    const payload = update[kinds[0]];
    let messageId;
    if (payload && typeof payload === 'object' && payload.chat) {
      rememberChat(payload.chat);
      if (payload.message_id === undefined) {
        payload.message_id = server.messageId;
        server.messageId += 1;
      }
      if (payload.date === undefined) payload.date = nowSeconds();
      messageId = payload.message_id;
    }
    const ids = { update_id: server.updateId, message_id: messageId };
    await server.addUserUpdate({ ...server.getCommonFields(token), messageId, rawUpdate: update });
    wakeWaiters();
    return ids;
  });
  handle('/uploadFile', async (body) => {
    const fileId = `emu-file-${fileCounter}-${crypto.randomBytes(6).toString('hex')}`;
    fileCounter += 1;
    const content = Buffer.from(String(body.content_base64 || ''), 'base64');
    extra.files.set(fileId, {
      file_id: fileId,
      file_unique_id: crypto.createHash('sha1').update(content).digest('hex').slice(0, 16),
      file_name: body.file_name || 'file',
      mime_type: body.mime_type || 'application/octet-stream',
      content,
    });
    return { file_id: fileId, file_unique_id: extra.files.get(fileId).file_unique_id, file_size: content.length };
  });
  const sameChat = (body, chatId) => body.chatId === undefined || String(body.chatId) === String(chatId);
  handle('/getDocuments', async (body) => {
    const token = tokenOf(body);
    const out = [];
    for (const stored of extra.files.values()) {
      for (const sent of stored.sent || []) {
        if (sent.token === token && sameChat(body, sent.chat_id)) {
          out.push({
            chat_id: sent.chat_id,
            message_id: sent.message_id,
            caption: sent.caption,
            file_id: stored.file_id,
            file_name: stored.file_name,
            mime_type: stored.mime_type,
            content_base64: stored.content.toString('base64'),
          });
        }
      }
    }
    return out.sort((a, b) => a.message_id - b.message_id);
  });
  handle('/getChatActions', async (body) => {
    const token = tokenOf(body);
    return extra.chatActions.filter((a) => a.token === token && sameChat(body, a.chat_id));
  });
  handle('/getMyCommands', async (body) => getMyCommands(server, tokenOf(body), body));
  // Wait (up to `timeout` s) until the bot has sent `count` messages into `chatId` in all;
  // answers how many it has and when each arrived here, so a benchmark times turns on this
  // clock instead of polling the whole history.
  handle('/waitBotMessages', async (body) => {
    const token = tokenOf(body);
    const count = intParam(body.count, 1);
    const deadline = Date.now() + Math.min(Math.max(Number(body.timeout) || 0, 0), 120) * 1000;
    const sent = () => server.storage.botMessages.filter(
      (m) => m.botToken === token && m.result && sameChat(body, m.message.chat_id));
    for (;;) {
      const found = sent();
      if (found.length >= count || Date.now() >= deadline) {
        return { count: found.length, received_ms: found.map((m) => m.receivedMs) };
      }
      await new Promise((resolve) => {
        const wake = () => { extra.botWaiters.delete(wake); clearTimeout(timer); resolve(); };
        const timer = setTimeout(wake, Math.max(deadline - Date.now(), 0));
        extra.botWaiters.add(wake);
      });
    }
  });
  handle('/getCallbackAnswers', async (body) => {
    const token = tokenOf(body);
    return extra.callbackAnswers.filter((a) => a.token === token);
  });
}

// ---------------------------------------------------------------------------------------------
// How queued updates look to the bot (replaces the built-in static formatter)

TelegramServer.formatUpdate = function formatUpdate(update) {
  if (update.rawUpdate) {
    return { update_id: update.updateId, ...update.rawUpdate };
  }
  if ('callbackQuery' in update) {
    const query = update.callbackQuery;
    const chat = query.message && query.message.chat;
    return {
      update_id: update.updateId,
      callback_query: {
        id: String(update.callbackId),
        from: query.from,
        chat_instance: String(query.chat_instance || (chat ? `ci${chat.id}` : 'ci')),
        message: query.message,
        data: query.data,
      },
    };
  }
  const { botToken: _botToken, ...message } = update.message;
  return { update_id: update.updateId, message: { ...message, message_id: update.messageId } };
};

// ---------------------------------------------------------------------------------------------
// Start

routes.unshift(botRoutes, fileRoutes, clientRoutes);

async function main() {
  const server = new TelegramServer({ port: PORT || 9000, host: HOST, storeTimeout: 24 * 60 * 60 });
  server.config.port = PORT; // normalizeConfig turns 0 into 9000; listen on what was asked
  await server.start();
  const { port } = server.server.address();
  process.stdout.write(`READY ${port}\n`);

  // Nothing here is worth a graceful shutdown: the state lives and dies with the process.
  const stop = () => process.exit(0);
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  if (PARENT_PIPE) {
    process.stdin.on('end', stop);
    process.stdin.on('close', stop);
    process.stdin.resume();
  }
}

main().catch((error) => {
  process.stderr.write(`[emulator] failed to start: ${error.stack || error}\n`);
  process.exit(1);
});
