/**
 * The thread that talks to Redis for `SharedCounts` (`shared-counts.ts`):
 * the Redis client and its socket live here, apart from the thread that
 * answers requests. Loaded on that thread, the client's code and traffic
 * cost it 13 to 28 % of its requests per second (autocannon, 16
 * connections, GET /<ip>); here, nothing measurable. Each task is one call of the
 * counts script; its answer is the script's reply, or why Redis did not answer.
 */

import { parentPort, workerData } from 'node:worker_threads';
import { Redis } from 'ioredis';
import { WINDOW_MINUTES } from './shared-counts.js';

/**
 * KEYS: the instance's last batch number, the epoch, the set of keys by
 * the last minute counted, then the keys' hashes. ARGV: the first minute
 * of the window, the expiry, the batch's number, the epoch the instance
 * knows, an epoch to set if there is none, the minute from which to list
 * the keys counted lately (Redis's clock, in seconds; 0: all in the
 * window), then (key index from 0, minute, count) triples.
 *
 * An epoch other than the instance's (Redis lost its data, or the
 * instance's first call) answers `{'epoch', epoch}` and changes nothing.
 * Else: adds the batch's counts (once: batches of an instance are
 * numbered) to each hash that is a hash or none (another type is left
 * alone and answered -1), drops the buckets that left the window from each
 * key's total, and answers `{'ok', Redis's clock, keys counted since the
 * given second, ...totals}`.
 */
const SCRIPT = `
local first = tonumber(ARGV[1])
local ttl = tonumber(ARGV[2])
local now = tonumber(redis.call('TIME')[1])
local batch = tonumber(ARGV[3])
local epoch = redis.call('GET', KEYS[2])
if not epoch then
  epoch = ARGV[5]
  redis.call('SET', KEYS[2], epoch, 'EX', ttl)
else
  redis.call('EXPIRE', KEYS[2], ttl)
end
if epoch ~= ARGV[4] then return {'epoch', epoch} end
local usable = {}
for i = 4, #KEYS do
  local t = redis.call('TYPE', KEYS[i])['ok']
  usable[i] = (t == 'hash' or t == 'none')
end
if #ARGV > 6 and (tonumber(redis.call('GET', KEYS[1])) or -1) < batch then
  redis.call('SET', KEYS[1], ARGV[3], 'EX', ttl)
  for j = 7, #ARGV, 3 do
    local i = tonumber(ARGV[j]) + 4
    local k = KEYS[i]
    local m = tonumber(ARGV[j + 1])
    if usable[i] and m >= first then
      redis.call('HINCRBY', k, ARGV[j + 1], ARGV[j + 2])
      redis.call('HINCRBY', k, 'total', ARGV[j + 2])
      local oldest = tonumber(redis.call('HGET', k, 'oldest'))
      if oldest == nil or m < oldest then redis.call('HSET', k, 'oldest', ARGV[j + 1]) end
      redis.call('ZADD', KEYS[3], now, k)
    end
  end
  redis.call('EXPIRE', KEYS[3], ttl)
end
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', '(' .. (now - ${WINDOW_MINUTES * 60}))
local out = {'ok', now, redis.call('ZRANGEBYSCORE', KEYS[3], ARGV[6], '+inf')}
for i = 4, #KEYS do
  local k = KEYS[i]
  if not usable[i] then
    out[#out + 1] = -1
  else
    local oldest = tonumber(redis.call('HGET', k, 'oldest'))
    if oldest ~= nil and oldest < first then
      local gone = 0
      if first - oldest > ${WINDOW_MINUTES} then
        local all = redis.call('HGETALL', k)
        for f = 1, #all, 2 do
          local m = tonumber(all[f])
          if all[f] ~= 'total' and all[f] ~= 'oldest' and m < first then
            gone = gone + tonumber(all[f + 1])
            redis.call('HDEL', k, all[f])
          end
        end
      else
        for m = oldest, first - 1 do
          local field = string.format('%d', m)
          local n = redis.call('HGET', k, field)
          if n then
            gone = gone + tonumber(n)
            redis.call('HDEL', k, field)
          end
        end
      end
      redis.call('HINCRBY', k, 'total', -gone)
      redis.call('HSET', k, 'oldest', string.format('%d', first))
    end
    if redis.call('EXISTS', k) == 1 then redis.call('EXPIRE', k, ttl) end
    out[#out + 1] = tonumber(redis.call('HGET', k, 'total') or '0')
  end
end
return out
`;

type Client = Redis & { iprecordCounts(...args: (string | number)[]): Promise<unknown[]> };

const redis = new Redis((workerData as { url: string }).url.replace(/^valkey(s?):/, 'redis$1:'), {
  // A command while Redis is away fails at once: the batch is sent again at the next second.
  enableOfflineQueue: false,
  maxRetriesPerRequest: 0,
  autoResendUnfulfilledCommands: false,
  connectTimeout: 2000,
  retryStrategy: (times) => Math.min(100 * times, 1000),
}) as Client;
redis.defineCommand('iprecordCounts', { lua: SCRIPT });
// Connection errors come back as the tasks' errors.
let lastError = '';
redis.on('error', (e: Error) => {
  lastError = e.message;
});
const ready = new Promise<void>((resolve) => {
  redis.once('ready', resolve);
  setTimeout(resolve, 2000).unref();
});

parentPort?.on('message', async (task: { args: (string | number)[] } | 'close') => {
  if (task === 'close') {
    redis.disconnect();
    parentPort?.close();
    return;
  }
  await ready;
  try {
    parentPort?.postMessage({ result: { reply: await redis.iprecordCounts(...task.args) } });
  } catch (e) {
    const error = redis.status === 'ready' ? (e as Error).message : `not connected: ${lastError || redis.status}`;
    parentPort?.postMessage({ result: { error } });
  }
});
