-- read.lua: read one key's live entry and its version in one round trip.
--
-- Liveness is decided by this script's clock with the rule commit.lua uses (live while
-- expiresAt > now), so a read never shows an entry that a commit would treat as absent.
--
-- KEYS[1] entry hash      {ws:<id>}:entry:<key>
-- KEYS[2] version hash    {ws:<id>}:versions
-- ARGV[1] state key
--
-- Returns {version} when the key is absent (never set, deleted or expired), else
-- {version, value, updatedAt, updatedBy, expiresAt, meta}.

local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local version = redis.call('HGET', KEYS[2], ARGV[1]) or '0'
local cur = redis.call('HMGET', KEYS[1], 'value', 'updatedAt', 'updatedBy', 'expiresAt', 'meta')
if not cur[1] or (cur[4] and tonumber(cur[4]) <= now) then
  return {version}
end
return {version, cur[1], cur[2], cur[3], cur[4], cur[5]}
