-- commit.lua: apply ONE mutation to a workspace atomically. Runs on Redis 6.2 and 7.x.
--
-- All checks come first (idempotency, expected version, op/value type, rate limit); only
-- then is anything written, so a rejected mutation changes nothing.
--
-- KEYS[1] entry hash      {ws:<id>}:entry:<key>   fields value, updatedAt, updatedBy,
--                                                 expiresAt, meta (value/updatedBy/meta: JSON)
-- KEYS[2] version hash    {ws:<id>}:versions      key -> last version; never decreases, kept
--                                                 after delete and expiry (no version reuse)
-- KEYS[3] key index       {ws:<id>}:keys          sorted set of live keys, all score 0
-- KEYS[4] mutation log    {ws:<id>}:log           stream; fields mutation, version, ts, expiresAt,
--                                                 prev (the value before, '' when absent) or,
--                                                 when it is longer than ARGV[15] bytes,
--                                                 prevSha1 and prevBytes in its place;
--                                                 then chain (below)
-- KEYS[5] idempotency     {ws:<id>}:idem:<mid>    "<logId>\nv<version>\n<request>" of
--                                                 mutation <mid>'s commit: what a retry needs,
--                                                 never the value; <request> is ARGV[18] (an
--                                                 older release wrote "<logId>\nv<version>",
--                                                 and before that "<logId>\n<value>")
-- KEYS[6] rate window     {ws:<id>}:rate:<k>:<a>  sorted set of commit times (read iff ARGV[10] > 0)
-- KEYS[7] chain head      {ws:<id>}:chain         hash: n, hash, id of the newest chained record
-- KEYS[8] timed reverts   {ws:<id>}:timed         sorted set: mutation id scored by the moment
--                                                 it reverts at (written iff ARGV[16] is given)
-- KEYS[9] (optional) a session hash {ws:<id>}:session:<sid> (session_cas.lua): the commit is
--                     made only if the tokens of its last saves hold ARGV[17]: a click's
--                     commit, sent in the same round trip as the click's save, runs only on
--                     that save (a save beaten by another writer's never lets it run)
--
-- The log is a hash chain (tamper-evident; core/state/chain/ verifies it): each record's
-- last field, chain, is "<n>:<h>", n its number in the chain (1, 2, ...) and
--   h = SHA-1( h' \n n \n  name \n #value \n value \n  for each other field in order )
-- where h' is the hash of record n-1 (for n = 1: SHA-1 of the log's key name, KEYS[4]) and
-- #value a byte count. SHA-1 because it is the one digest Redis's Lua has (redis.sha1hex,
-- in C): SHA-256 written in Lua took 206 us per 400-byte record here, against 0.8 us.
--
-- ARGV[1]  state key
-- ARGV[2]  op: set | delete | append | incr
-- ARGV[3]  compact JSON: the value (set), the item (append), the delta (incr); '' for delete
-- ARGV[4]  expected version, '' for none (an absent key's version is its last version, 0 if new)
-- ARGV[5]  ttl in milliseconds, '' for none (set clears expiry; append and incr keep it)
-- ARGV[6]  the mutation as JSON, logged verbatim
-- ARGV[7]  the actor as JSON (updatedBy)
-- ARGV[8]  the entry meta as JSON
-- ARGV[9]  how long to remember the mutation id, milliseconds
-- ARGV[10] rate limit: max commits per window per actor and key, 0 for none
-- ARGV[11] rate limit window, milliseconds
-- ARGV[12] mutation id
-- ARGV[13] the most bytes the resulting value may take, 0 for no limit
-- ARGV[14] append only: the most items the resulting list may hold, 0 for no limit
-- ARGV[15] the most bytes of the previous value a log record keeps whole, 0 for no limit
-- ARGV[16] a change for a while: milliseconds after the commit its revert is due, '' (or
--          absent) for none; KEYS[8] gets (now + ARGV[16], mutation id) with the commit
-- ARGV[17] with KEYS[9]: the token of the save the commit runs on (hex, never empty);
--          '' without it
-- ARGV[18] the request's own id (hex; '' or absent: none), the same each time the request
--          is sent again: a duplicate whose first run had it is this request's, whose answer
--          was lost (wherever it was sent again: by the caller, or inside the client)
-- ARGV[19] '1': the reply says what the key held before, as the log record keeps it (for
--          an Undo of it that needs no lookup); '' or absent: not
-- ARGV[20] a deadline, epoch ms of the server's clock: at or past it, nothing is written
--          (an Undo offered for a while); '' or absent: none
--
-- Returns a flat array whose first element is the status:
--   ok             : status, version, value, updatedAt, expiresAt, logId
--                    (updatedBy and meta are what the caller sent: not sent back), and
--                    with ARGV[19], prev: the value before ('' when absent), or false
--                    when the log keeps only its SHA-1
--   duplicate      : status, logId, 'v'version, updatedAt, mutation, expiresAt, prev,
--                    prevSha1, current version, current value, current expiresAt, mine
--                    (1: the first run was this request's, ARGV[18], and its record's
--                    time to live is set again, a write a WAIT after it waits for; else 0)
--                    (the first commit, from its log record, and the key as it is now: the
--                    caller derives the value the first commit produced. updatedAt,
--                    mutation, expiresAt are false when the log no longer holds the record
--                    (compacted), prev and prevSha1 false when not kept)
--   conflict       : status, version, value, updatedAt, updatedBy, expiresAt, meta
--                    (the latest entry; value is nil when the key is absent)
--   not_found      : status, version
--   type           : status, message (incr on a non-number, append on a non-list)
--   expired        : status, the server's clock (ms) (at or past ARGV[20])
--   schema         : status, message (the resulting value breaks a size limit)
--   rate_limited   : status, retry-after milliseconds
--   unsaved        : status (KEYS[9] given and its saves do not hold ARGV[17]: nothing written)
-- Numbers are returned as strings so that no Lua float is ever truncated.

local FIELDS = {'value', 'updatedAt', 'updatedBy', 'expiresAt', 'meta'}

local request = ARGV[18] or ''
local first = redis.call('GET', KEYS[5])
if first then
  local cut = string.find(first, '\n', 1, true)
  local first_id, first_version = string.sub(first, 1, cut - 1), string.sub(first, cut + 1)
  -- (only a record "v<n>\n<request>" names its request: an older one's value may hold lines)
  local version_of, by = string.match(first_version, '^(v%d+)\n(.*)$')
  if version_of then first_version = version_of end
  local mine = 0
  if request ~= '' and by == request then
    mine = 1
    -- a write of this connection's, after the first run's: a WAIT that follows on it covers
    -- that run too (a resend on a fresh connection has written nothing WAIT could wait for)
    redis.call('PEXPIRE', KEYS[5], ARGV[9])
  end
  local now_version = redis.call('HGET', KEYS[2], ARGV[1]) or '0'
  local now = redis.call('HMGET', KEYS[1], 'value', 'expiresAt')
  local rows = redis.call('XRANGE', KEYS[4], first_id, first_id)
  if not rows[1] then
    return {'duplicate', first_id, first_version, false, false, false, false, false,
            now_version, now[1], now[2], mine}
  end
  local rec, f = rows[1][2], {}
  for i = 1, #rec, 2 do f[rec[i]] = rec[i + 1] end
  local prev = f.prev
  if f.prevSha1 then prev = false end
  return {'duplicate', first_id, 'v' .. f.version, f.ts, f.mutation,
          f.expiresAt ~= '' and f.expiresAt or false, prev or false, f.prevSha1 or false,
          now_version, now[1], now[2], mine}
end

-- (after the idempotency record: a commit sent again answers as its first run did)
if KEYS[9] then
  local token, saves = ARGV[17] or '', redis.call('HGET', KEYS[9], 'saves') or ''
  if token == '' or string.find(token, ' ', 1, true)
      or not string.find(' ' .. saves .. ' ', ' ' .. token .. ' ', 1, true) then
    return {'unsaved'}
  end
end

local key, op, arg = ARGV[1], ARGV[2], ARGV[3]
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
if (ARGV[20] or '') ~= '' and now >= tonumber(ARGV[20]) then
  return {'expired', string.format('%d', now)}
end

-- An entry is live while expiresAt > now. Redis itself keeps a key through its expiry
-- millisecond, so the script decides by its own clock, the same rule reads and replay use.
local cur = redis.call('HMGET', KEYS[1], unpack(FIELDS))
local stored, had_expiry = cur[1] ~= false, cur[4] ~= false
if had_expiry and tonumber(cur[4]) <= now then
  cur = {false, false, false, false, false}
end
local present = cur[1] ~= false
local version = tonumber(redis.call('HGET', KEYS[2], key) or '0')

if ARGV[4] ~= '' and tonumber(ARGV[4]) ~= version then
  return {'conflict', string.format('%d', version), cur[1], cur[2], cur[3], cur[4], cur[5]}
end

-- Numbers are JSON text in and out; integers stay integers while they fit a double exactly.
local EXACT = 9007199254740992  -- 2^53
local function is_integer_text(s)
  return string.find(s, '^%-?%d+$') ~= nil
end

-- What a stored JSON text holds, for messages: never the value itself (it may be secret).
local function json_type(s)
  local c = string.sub(s, 1, 1)
  if c == '"' then return 'a string' elseif c == '[' then return 'a list'
  elseif c == '{' then return 'an object' elseif c == 't' or c == 'f' then return 'a boolean'
  elseif c == 'n' then return 'null' end
  return 'a number'
end

local value
if op == 'set' then
  value = arg
elseif op == 'delete' then
  if not present then
    return {'not_found', string.format('%d', version)}
  end
elseif op == 'incr' then
  local base = present and cur[1] or '0'
  local a, d = tonumber(base), tonumber(arg)
  if a == nil then
    return {'type', 'incr needs a number; ' .. key .. ' holds ' .. json_type(base)}
  end
  local sum = a + d
  -- beyond 2^53 a double no longer holds every integer: refuse rather than round
  if sum ~= sum or math.abs(a) >= EXACT or math.abs(d) >= EXACT or math.abs(sum) >= EXACT then
    return {'type', 'incr of ' .. key .. ' is out of the exact range (|n| < 2^53)'}
  end
  if is_integer_text(base) and is_integer_text(arg) then
    value = string.format('%d', sum)
  else
    value = string.format('%.17g', sum)
    if not string.find(value, '[%.eEn]') then value = value .. '.0' end
  end
elseif op == 'append' then
  local base = present and cur[1] or '[]'
  if string.sub(base, 1, 1) ~= '[' then
    return {'type', 'append needs a list; ' .. key .. ' holds ' .. json_type(base)}
  end
  local max_items = tonumber(ARGV[14])
  if max_items > 0 and #cjson.decode(base) + 1 > max_items then
    return {'schema', key .. ' may hold at most ' .. max_items .. ' items'}
  end
  if base == '[]' then
    value = '[' .. arg .. ']'
  else
    value = string.sub(base, 1, -2) .. ',' .. arg .. ']'
  end
else
  return {'type', 'unknown op ' .. op}
end

local max_bytes = tonumber(ARGV[13])
if value and max_bytes > 0 and #value > max_bytes then
  return {'schema', key .. ' would take ' .. #value .. ' bytes, more than the ' .. max_bytes ..
          ' allowed'}
end

local rate_max = tonumber(ARGV[10])
if rate_max > 0 then
  local window = tonumber(ARGV[11])
  redis.call('ZREMRANGEBYSCORE', KEYS[6], '-inf', now - window)
  if redis.call('ZCARD', KEYS[6]) >= rate_max then
    local oldest = redis.call('ZRANGE', KEYS[6], 0, 0, 'WITHSCORES')
    return {'rate_limited', string.format('%d', tonumber(oldest[2]) + window - now)}
  end
end

-- Every check passed: write.
local expires_at = false
if ARGV[5] ~= '' then
  expires_at = string.format('%d', now + tonumber(ARGV[5]))
elseif present and (op == 'incr' or op == 'append') then
  expires_at = cur[4]
end

version = version + 1
local sversion, snow = string.format('%d', version), string.format('%d', now)
redis.call('HSET', KEYS[2], key, sversion)
if op == 'delete' then
  redis.call('DEL', KEYS[1])
  redis.call('ZREM', KEYS[3], key)
else
  -- HSET keeps a key's TTL and leaves old fields, so a hash that had an expiry starts over
  if had_expiry then redis.call('DEL', KEYS[1]) end
  if expires_at then
    redis.call('HSET', KEYS[1], 'value', value, 'updatedAt', snow, 'updatedBy', ARGV[7],
               'meta', ARGV[8], 'expiresAt', expires_at)
    redis.call('PEXPIREAT', KEYS[1], expires_at)
  else
    redis.call('HSET', KEYS[1], 'value', value, 'updatedAt', snow, 'updatedBy', ARGV[7],
               'meta', ARGV[8])
  end
  if not stored or had_expiry then redis.call('ZADD', KEYS[3], 0, key) end
end

-- 'prev': the value the key held just before (empty: absent), so that rules can test what
-- a key changed from without reading history; a long one is kept as its SHA-1 and length
-- only, so that the log does not copy a large document on every change
local prev_max = tonumber(ARGV[15])
local record
if cur[1] and prev_max > 0 and #cur[1] > prev_max then
  record = {'mutation', ARGV[6], 'version', sversion, 'ts', snow, 'expiresAt',
            expires_at or '', 'prevSha1', redis.sha1hex(cur[1]),
            'prevBytes', string.format('%d', #cur[1])}
else
  record = {'mutation', ARGV[6], 'version', sversion, 'ts', snow, 'expiresAt',
            expires_at or '', 'prev', cur[1] or ''}
end

-- the chain: this record's number and hash, over its predecessor's and its own fields
local head = redis.call('HMGET', KEYS[7], 'n', 'hash')
local n = string.format('%d', tonumber(head[1] or '0') + 1)
local parts = {head[2] or redis.sha1hex(KEYS[4]), n}
for i = 1, #record, 2 do
  local v = record[i + 1]
  parts[#parts + 1] = record[i] .. '\n' .. #v .. '\n' .. v
end
local hash = redis.sha1hex(table.concat(parts, '\n'))
record[#record + 1] = 'chain'
record[#record + 1] = n .. ':' .. hash
local log_id = redis.call('XADD', KEYS[4], '*', unpack(record))
redis.call('HSET', KEYS[7], 'n', n, 'hash', hash, 'id', log_id)

redis.call('SET', KEYS[5], log_id .. '\nv' .. sversion .. '\n' .. request, 'PX', ARGV[9])
if ARGV[16] and ARGV[16] ~= '' then
  redis.call('ZADD', KEYS[8], string.format('%d', now + tonumber(ARGV[16])), ARGV[12])
end

if rate_max > 0 then
  redis.call('ZADD', KEYS[6], now, ARGV[12])
  redis.call('PEXPIRE', KEYS[6], ARGV[11])
end

if ARGV[19] == '1' then
  local prev = cur[1] or ''
  if prev_max > 0 and #prev > prev_max then prev = false end
  return {'ok', sversion, value or false, snow, expires_at, log_id, prev}
end
return {'ok', sversion, value or false, snow, expires_at, log_id}
