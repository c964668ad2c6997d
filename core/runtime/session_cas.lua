-- session_cas.lua: save a session only if nobody saved it since it was read.
--
-- KEYS[1] session hash   {ws:<id>}:session:<session id>   fields version, data (JSON)
-- ARGV[1] the version the caller read (0: the session did not exist)
-- ARGV[2] the new session JSON (its own version field is the new version)
-- ARGV[3] time to live, milliseconds (refreshed by every save)
--
-- Returns {1, new version} when saved, {0, current version} when someone saved first.

local current = tonumber(redis.call('HGET', KEYS[1], 'version') or '0')
if current ~= tonumber(ARGV[1]) then
  return {0, current}
end
redis.call('HSET', KEYS[1], 'version', current + 1, 'data', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return {1, current + 1}
