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
 * Drops the minute buckets of hash `k` before minute `first` from its
 * total (its `oldest` says whether any are left); shared by both scripts.
 */
const PRUNE = `
local function prune(k, first)
  local oldest = tonumber(redis.call('HGET', k, 'oldest'))
  if oldest == nil or oldest >= first then return end
  local gone = 0
  if first - oldest > ${WINDOW_MINUTES} then
    local all = redis.call('HGETALL', k)
    for f = 1, #all, 2 do
      local m = tonumber(all[f])
      if m ~= nil and m < first then
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
`;

/**
 * KEYS: the instance's last batch number, the epoch, the set of keys by
 * the last minute counted, then the n keys' count hashes, then their n
 * lease hashes. ARGV: the first minute of the window, the expiry, the
 * batch's number, the epoch the instance knows, an epoch to set if there
 * is none, the second from which to list the keys counted lately (Redis's
 * clock; 0: all in the window), n, how long a lease lasts without news
 * (seconds), then (key index from 0, minute, count) triples.
 *
 * An epoch other than the instance's (Redis lost its data, or the
 * instance's first call) answers `{'epoch', epoch}` and changes nothing.
 * Else: adds the batch's counts (once: batches of an instance are
 * numbered) to each hash that is a hash or none (another type is left
 * alone and answered -1), takes them off the instance's lease of that key
 * (what a lease holds is what it granted less what was counted since),
 * keeps the instance's leases alive, drops the buckets that left the
 * window from each key's total, and answers `{'ok', Redis's clock, keys
 * counted since the given second, ...totals}`.
 */
const SCRIPT = `${PRUNE}
local first = tonumber(ARGV[1])
local ttl = tonumber(ARGV[2])
local now = tonumber(redis.call('TIME')[1])
local batch = tonumber(ARGV[3])
local n = tonumber(ARGV[7])
local leaseTtl = tonumber(ARGV[8])
local me = KEYS[1]
local epoch = redis.call('GET', KEYS[2])
if not epoch then
  epoch = ARGV[5]
  redis.call('SET', KEYS[2], epoch, 'EX', ttl)
else
  redis.call('EXPIRE', KEYS[2], ttl)
end
if epoch ~= ARGV[4] then return {'epoch', epoch} end
local usable = {}
for i = 4, 3 + n do
  local t = redis.call('TYPE', KEYS[i])['ok']
  usable[i] = (t == 'hash' or t == 'none')
end
if #ARGV > 8 and (tonumber(redis.call('GET', KEYS[1])) or -1) < batch then
  redis.call('SET', KEYS[1], ARGV[3], 'EX', ttl)
  for j = 9, #ARGV, 3 do
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
    local l = KEYS[i + n]
    if redis.call('HEXISTS', l, me) == 1 and redis.call('HINCRBY', l, me, -tonumber(ARGV[j + 2])) <= 0 then redis.call('HDEL', l, me, me .. ':until') end
  end
  redis.call('EXPIRE', KEYS[3], ttl)
end
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', '(' .. (now - ${WINDOW_MINUTES * 60}))
local out = {'ok', now, redis.call('ZRANGEBYSCORE', KEYS[3], ARGV[6], '+inf')}
for i = 4, 3 + n do
  local k = KEYS[i]
  local l = KEYS[i + n]
  if redis.call('HEXISTS', l, me) == 1 then
    redis.call('HSET', l, me .. ':until', now + leaseTtl)
    redis.call('EXPIRE', l, ttl)
  end
  if not usable[i] then
    out[#out + 1] = -1
  else
    prune(k, first)
    if redis.call('EXISTS', k) == 1 then redis.call('EXPIRE', k, ttl) end
    out[#out + 1] = tonumber(redis.call('HGET', k, 'total') or '0')
  end
end
return out
`;

/**
 * A lease: a share of a key's quota that the instance answers from alone.
 * KEYS: the key's count hash, its lease hash, the epoch. ARGV: the
 * instance (its batch key), the requests needed (-1: give back what the
 * instance holds), the quota, the share of what is left a lease takes
 * (1/ARGV[4]), the largest lease, the epoch the instance knows, how long a
 * lease lasts without news (seconds), the expiry, the first minute of the
 * window.
 *
 * What is left is the quota less the key's total in the window and less
 * every lease held (each what it granted less what its instance counted
 * since; a lease whose instance sent nothing for its time is dropped). A
 * lease is granted when at least the requests needed are left: the larger
 * of those and the share, at most the largest lease and what is left.
 * Answers `{'ok', granted, left after it}`, `{'epoch'}` when Redis's epoch
 * is not the instance's, `{'type'}` when the count key is not a hash.
 */
const LEASE = `${PRUNE}
local k = KEYS[1]
local l = KEYS[2]
local me = ARGV[1]
local need = tonumber(ARGV[2])
if redis.call('GET', KEYS[3]) ~= ARGV[6] then return {'epoch'} end
if need < 0 then
  redis.call('HDEL', l, me, me .. ':until')
  return {'ok', 0, 0}
end
local t = redis.call('TYPE', k)['ok']
if t ~= 'hash' and t ~= 'none' then return {'type'} end
local now = tonumber(redis.call('TIME')[1])
prune(k, tonumber(ARGV[9]))
local held = 0
local all = redis.call('HGETALL', l)
for f = 1, #all, 2 do
  local name = all[f]
  if string.sub(name, -6) ~= ':until' then
    if (tonumber(redis.call('HGET', l, name .. ':until')) or 0) < now then
      redis.call('HDEL', l, name, name .. ':until')
    else
      held = held + tonumber(all[f + 1])
    end
  end
end
local left = tonumber(ARGV[3]) - tonumber(redis.call('HGET', k, 'total') or '0') - held
if left < need or need == 0 then return {'ok', 0, math.max(left, 0)} end
local grant = math.min(left, math.max(need, math.min(tonumber(ARGV[5]), math.floor(left / tonumber(ARGV[4])))))
redis.call('HINCRBY', l, me, grant)
redis.call('HSET', l, me .. ':until', now + tonumber(ARGV[7]))
redis.call('EXPIRE', l, tonumber(ARGV[8]))
return {'ok', grant, left - grant}
`;

type Client = Redis & {
  iprecordCounts(...args: (string | number)[]): Promise<unknown[]>;
  iprecordLease(...args: (string | number)[]): Promise<unknown[]>;
};

const redis = new Redis((workerData as { url: string }).url.replace(/^valkey(s?):/, 'redis$1:'), {
  // A command while Redis is away fails at once: the batch is sent again at the next second.
  enableOfflineQueue: false,
  maxRetriesPerRequest: 0,
  autoResendUnfulfilledCommands: false,
  connectTimeout: 2000,
  retryStrategy: (times) => Math.min(100 * times, 1000),
}) as Client;
redis.defineCommand('iprecordCounts', { lua: SCRIPT });
redis.defineCommand('iprecordLease', { numberOfKeys: 3, lua: LEASE });
// Connection errors come back as the tasks' errors.
let lastError = '';
redis.on('error', (e: Error) => {
  lastError = e.message;
});
const ready = new Promise<void>((resolve) => {
  redis.once('ready', resolve);
  setTimeout(resolve, 2000).unref();
});

parentPort?.on('message', async (task: { args: (string | number)[]; lease?: true } | 'close') => {
  if (task === 'close') {
    redis.disconnect();
    parentPort?.close();
    return;
  }
  await ready;
  try {
    parentPort?.postMessage({
      result: { reply: await (task.lease ? redis.iprecordLease(...task.args) : redis.iprecordCounts(...task.args)) },
    });
  } catch (e) {
    const error = redis.status === 'ready' ? (e as Error).message : `not connected: ${lastError || redis.status}`;
    parentPort?.postMessage({ result: { error } });
  }
});
