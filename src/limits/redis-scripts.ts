/**
 * @module limits/redis-scripts
 * The Lua scripts of the Redis quotas (`redis-quotas.ts`). Each runs atomically on the server
 * and reads the time from Redis (`TIME`), so every instance sees the same clock.
 */
import type { RedisScript } from "../store/index.ts";

const NOW = `
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
`;

/**
 * KEYS: per budget holder, its rpm set, lease set and tpm hash; then the restart marker (see
 * {@link MARK_SCRIPT}). ARGV: lease member, lease ms, window ms, holder count, then per holder
 * its rpm, concurrency and tpm limits (-1: none), then the warm-up ms after a restart (0: none).
 * Returns `{kind, limit, resetMs, holder}` for a refusal (1 rpm, 2 concurrency, 3 tpm; holder:
 * its index, from 0), `{4, 0, ms}` while leases may still be missing after Redis lost its data
 * (the marker gone), else `{0,
 * rpm, rpmRemaining, rpmReset, tpm, tpmRemaining, tpmReset, concurrency}` of the tightest
 * budgets (-1: none), having spent one request and one lease of every budget.
 */
export const ACQUIRE_SCRIPT: RedisScript = {
  name: "acquire",
  lua: `${NOW}
local member = ARGV[1]
local leaseMs = tonumber(ARGV[2])
local windowMs = tonumber(ARGV[3])
local holders = tonumber(ARGV[4])
local rpmBest, rpmLeft, rpmReset = -1, 0, 0
local tpmBest, tpmLeft, tpmReset = -1, 0, 0
local concBest = -1
-- A Redis that lost its data (a restart without persistence) lost the leases of running
-- requests too: until their instances have put them back, no concurrency check can be trusted.
local warmupMs = tonumber(ARGV[5 + holders * 3])
for i = 0, holders - 1 do
  if warmupMs <= 0 then break end
  if tonumber(ARGV[6 + i * 3]) >= 0 then
    local epochKey = KEYS[holders * 3 + 1]
    local warmEnds = redis.call('GET', epochKey)
    if not warmEnds then
      redis.call('SET', epochKey, now + warmupMs)
      return {4, 0, warmupMs, 0}
    end
    if now < tonumber(warmEnds) then return {4, 0, tonumber(warmEnds) - now, 0} end
    break
  end
end
for i = 0, holders - 1 do
  local rpmKey, concKey, tpmKey = KEYS[i * 3 + 1], KEYS[i * 3 + 2], KEYS[i * 3 + 3]
  local rpm = tonumber(ARGV[5 + i * 3])
  local conc = tonumber(ARGV[6 + i * 3])
  local tpm = tonumber(ARGV[7 + i * 3])
  if rpm >= 0 then
    redis.call('ZREMRANGEBYSCORE', rpmKey, '-inf', now - windowMs)
    local count = redis.call('ZCARD', rpmKey)
    local reset = windowMs
    local oldest = redis.call('ZRANGE', rpmKey, 0, 0, 'WITHSCORES')
    if oldest[2] then reset = tonumber(oldest[2]) + windowMs - now end
    if count >= rpm then return {1, rpm, reset, i} end
    local left = rpm - count - 1
    if rpmBest < 0 or left < rpmLeft then rpmBest, rpmLeft, rpmReset = rpm, left, reset end
  end
  if tpm >= 0 then
    local since = math.floor((now - windowMs) / 1000)
    local used, first = 0, nil
    local buckets = redis.call('HGETALL', tpmKey)
    for j = 1, #buckets, 2 do
      local second = tonumber(buckets[j])
      if second <= since then
        redis.call('HDEL', tpmKey, buckets[j])
      else
        used = used + tonumber(buckets[j + 1])
        if first == nil or second < first then first = second end
      end
    end
    local reset = windowMs
    if first ~= nil then reset = (first + 1) * 1000 + windowMs - now end
    if used >= tpm then return {3, tpm, reset, i} end
    local left = tpm - used
    if tpmBest < 0 or left < tpmLeft then tpmBest, tpmLeft, tpmReset = tpm, left, reset end
  end
  if conc >= 0 then
    redis.call('ZREMRANGEBYSCORE', concKey, '-inf', now)
    if redis.call('ZCARD', concKey) >= conc then return {2, conc, 0, i} end
    if concBest < 0 or conc < concBest then concBest = conc end
  end
end
for i = 0, holders - 1 do
  local rpmKey, concKey = KEYS[i * 3 + 1], KEYS[i * 3 + 2]
  if tonumber(ARGV[5 + i * 3]) >= 0 then
    redis.call('ZADD', rpmKey, now, member)
    redis.call('PEXPIRE', rpmKey, windowMs)
  end
  if tonumber(ARGV[6 + i * 3]) >= 0 then
    redis.call('ZADD', concKey, now + leaseMs, member)
    local ttl = redis.call('PTTL', concKey)
    if ttl < leaseMs then redis.call('PEXPIRE', concKey, leaseMs) end
  end
end
return {0, rpmBest, rpmLeft, rpmReset, tpmBest, tpmLeft, tpmReset, concBest}
`,
};

/**
 * KEYS: the restart marker. ARGV: the warm-up ms after a restart (0: none). Set by an instance
 * when it starts with Redis up: its absence later means Redis lost its data, and concurrency
 * checks wait for the leases to be put back. An instance that starts on a Redis that has itself
 * just started (a restart that lost the leases of the other instances' running requests) sets
 * it to the end of the warm-up counted from the server's start (its uptime, whole seconds, so
 * counted from the latest moment it can have started), not to "no warm-up".
 */
export const MARK_SCRIPT: RedisScript = {
  name: "mark",
  lua: `${NOW}
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local warmupMs = tonumber(ARGV[1]) or 0
local uptimeMs = tonumber(string.match(redis.call('INFO', 'server'), 'uptime_in_seconds:(%d+)') or '0') * 1000
local warmEnds = 0
if uptimeMs < warmupMs then warmEnds = now - uptimeMs + warmupMs end
redis.call('SET', KEYS[1], warmEnds)
return 0
`,
};

/** KEYS: the lease (and rpm) sets. ARGV: the member. Ends the lease (and admission) in each. */
export const RELEASE_SCRIPT: RedisScript = {
  name: "release",
  lua: `
for i = 1, #KEYS do redis.call('ZREM', KEYS[i], ARGV[1]) end
return 0
`,
};

/**
 * KEYS: the lease sets. ARGV: the member, ms to live. Extends the lease, or puts it back when
 * Redis lost it (a restart without persistence): the request still runs.
 */
export const RENEW_SCRIPT: RedisScript = {
  name: "renew",
  lua: `${NOW}
local leaseMs = tonumber(ARGV[2])
for i = 1, #KEYS do
  redis.call('ZADD', KEYS[i], now + leaseMs, ARGV[1])
  local ttl = redis.call('PTTL', KEYS[i])
  if ttl < leaseMs then redis.call('PEXPIRE', KEYS[i], leaseMs) end
end
return 0
`,
};

/** KEYS: the tpm hashes. ARGV: tokens, window ms. Counts the tokens in this second's bucket. */
export const SPEND_SCRIPT: RedisScript = {
  name: "spend",
  lua: `${NOW}
local second = tostring(math.floor(now / 1000))
for i = 1, #KEYS do
  redis.call('HINCRBY', KEYS[i], second, tonumber(ARGV[1]))
  redis.call('PEXPIRE', KEYS[i], tonumber(ARGV[2]) + 2000)
end
return 0
`,
};

/** KEYS: one lease set. Returns how many leases in it are live. */
export const COUNT_SCRIPT: RedisScript = {
  name: "count",
  lua: `${NOW}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
return redis.call('ZCARD', KEYS[1])
`,
};
