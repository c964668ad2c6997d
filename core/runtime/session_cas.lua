-- session_cas.lua: save a session only if nobody saved it since it was read, and with it the
-- stream rows its update asked for (transcript lines, beat evaluations) and the trace row of
-- the message, all in one round trip.
--
-- KEYS[1]  session hash   {ws:<id>}:session:<session id>   fields version, data (JSON), token,
--          saves (the tokens of its last saves, newest first, space-separated: SAVES_CHARS)
-- KEYS[2…] the streams the rows go to (the trace, the transcript, the beat log: the same
--          workspace, so the same hash tag and slot), and the record ARGV[7] names, if any
-- ARGV[1]  the version the caller read (0: the session did not exist)
-- ARGV[2]  the new session JSON (its own version field is the new version); '' when the
--          update changed nothing: then only check that nobody saved since it was read
-- ARGV[3]  time to live, milliseconds (refreshed by every save)
-- ARGV[4]  this save's token, kept in the hash: a save sent again after its answer was lost
--          finds its own token (among the last saves', also when others saved after it)
--          and answers as its first run did, writing nothing twice (but for a save that
--          changed nothing of a session never saved: no hash is made to keep its token)
-- ARGV[5]  how many of the rows below are written whatever the check says (the message's
--          trace row: the trace keeps every message, a racing one too); the others only
--          with the save
-- ARGV[6]  the token of the save that made the version the caller read ('' : not known,
--          the version alone is checked): a session that expired or was deleted, then
--          saved again up to the same version by someone else, is not the one read
-- ARGV[7]  '' or a condition on a commit made before this save: "<i>\n<tail>", KEYS[i] the
--          commit's idempotency record (commit.lua's KEYS[5]), which must end with "\n<tail>"
--          ("v<version>\n<request>": that request made it, at that version): the save of
--          what a click's commit came to, foreseen, sent in the same round trip as the
--          commit, lands only if the commit came to what was foreseen
-- ARGV[8…] the rows, each as: index of its stream in KEYS, MAXLEN (approximate, ~), seconds
--          the stream lives on ('' : no expiry set), n, then n field/value pairs
--
-- Returns {1, version}: saved (or, unchanged, found as read) and the rows written;
--         {0, current version, current data or false, current token or false}: someone
--         saved first, nothing but the always-written rows written (the caller updates the
--         current session again);
--         {2}: the commit of ARGV[7] did not come to what was foreseen; nothing but the
--         always-written rows written.

local function append(at)
  local stream, maxlen, ttl, n = KEYS[tonumber(ARGV[at])], ARGV[at + 1], ARGV[at + 2], ARGV[at + 3]
  local last = at + 3 + 2 * tonumber(n)
  redis.call('XADD', stream, 'MAXLEN', '~', maxlen, '*', unpack(ARGV, at + 4, last))
  if ttl ~= '' then
    redis.call('EXPIRE', stream, ttl)
  end
  return last + 1
end

-- the last saves' tokens kept: 16 of 32 characters (a save's answer lost, then 15 saves by
-- others: it is still known)
local SAVES_CHARS = 16 * 33 - 1

local read, data, ttl_ms, token = tonumber(ARGV[1]), ARGV[2], ARGV[3], ARGV[4]
local read_token = ARGV[6]
-- (the session's JSON is read only when it is the answer: a few KB into Lua and back)
local current = redis.call('HMGET', KEYS[1], 'version', 'token', 'saves')
local version = tonumber(current[1] or '0')
local saves = current[3] or ''
if (version == read + 1 and data ~= '' and current[2] == token)
    or (token ~= '' and not string.find(token, ' ', 1, true)
        and string.find(' ' .. saves .. ' ', ' ' .. token .. ' ', 1, true)) then
  return {1, version}  -- this very save, sent again: done already
end

local at = 8
for _ = 1, tonumber(ARGV[5]) do
  at = append(at)
end
if ARGV[7] ~= '' then
  local i, tail = string.match(ARGV[7], '^(%d+)\n(.*)$')
  local record = redis.call('GET', KEYS[tonumber(i)])
  if not record or string.sub(record, -(#tail + 1)) ~= '\n' .. tail then
    return {2}
  end
end
if version ~= read or (read_token ~= '' and version > 0 and current[2] ~= read_token) then
  return {0, version, redis.call('HGET', KEYS[1], 'data'), current[2]}
end
-- the rows first: a row that fails (a stream key of another type) leaves the session and its
-- tokens as they were (a commit made only on this save, commit.lua's KEYS[9], never runs)
while at <= #ARGV do
  at = append(at)
end
-- this save's token first among the last saves' (a save that changed nothing but wrote rows,
-- to a session that exists, is known too: its rows are not written twice either)
local kept = token
if saves ~= '' then
  kept = token .. ' ' .. saves
  if #kept > SAVES_CHARS then  -- (the oldest go, whole)
    kept = string.match(string.sub(kept, 1, SAVES_CHARS + 1), '^(.*) ') or token
  end
end
if data ~= '' then
  version = version + 1
  redis.call('HSET', KEYS[1], 'version', version, 'data', data, 'token', token, 'saves', kept)
  redis.call('PEXPIRE', KEYS[1], ttl_ms)
elseif version > 0 and #ARGV >= 8 then
  redis.call('HSET', KEYS[1], 'saves', kept)
end
return {1, version}
