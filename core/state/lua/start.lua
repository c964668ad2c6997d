-- start.lua: where the log's hash chain starts, read in one step (so that a compaction
-- cannot fall between the mark and the checkpoint it vouches for): the compaction mark, the
-- SHA-1 of the checkpoint's text and the log id it reaches, and the text itself if asked.
--
-- KEYS[1] compaction mark  {ws:<id>}:compacted
-- KEYS[2] checkpoint       {ws:<id>}:checkpoint
-- KEYS[3] checkpoint id    {ws:<id>}:checkpoint:at
-- ARGV[1] '1' to return the checkpoint's text too, else '0'
--
-- Returns {the mark's fields (flat, empty when the log was never compacted), the
-- checkpoint's SHA-1 or false, the id it reaches or false, its text (ARGV[1] = '1') or false,
-- the id its text names or false}.

local text = redis.call('GET', KEYS[2])
local sha, names, shown = false, false, false
if text then
  sha = redis.sha1hex(text)
  names = string.match(text, '^{"lastId": "(%d+%-%d+)"') or false
end
if ARGV[1] == '1' then shown = text end
return {redis.call('HGETALL', KEYS[1]), sha, redis.call('GET', KEYS[3]), shown, names}
