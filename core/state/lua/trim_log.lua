-- trim_log.lua: trim the mutation log through one record and mark it, in one step, and only
-- if the checkpoint already holds the result of what is trimmed.
--
-- KEYS[1] mutation log     {ws:<id>}:log
-- KEYS[2] compaction mark  {ws:<id>}:compacted   hash: through, records, at, and chain: the
--                                               chain field ("<n>:<hash>") of the record
--                                               through, where verifying the log starts
-- KEYS[3] checkpoint id    {ws:<id>}:checkpoint:at
-- ARGV[1] the last log id to trim ("<ms>-<seq>")
--
-- Returns the number of records trimmed, or -1 (nothing done) when the checkpoint does not
-- reach ARGV[1].

local function order(id)
  local ms, seq = string.match(id, '^(%d+)-(%d+)$')
  return tonumber(ms), tonumber(seq)
end

local through = ARGV[1]
local covered = redis.call('GET', KEYS[3])
if not covered then return -1 end
local cms, cseq = order(covered)
local tms, tseq = order(through)
if cms < tms or (cms == tms and cseq < tseq) then return -1 end

-- the chain's link to what goes: kept with the mark, in the same step as the trim
local last = redis.call('XRANGE', KEYS[1], through, through)
local chain = false
if last[1] then
  local rec = last[1][2]
  for i = 1, #rec, 2 do
    if rec[i] == 'chain' then chain = rec[i + 1] end
  end
end

local n = redis.call('XTRIM', KEYS[1], 'MINID', string.format('%d-%d', tms, tseq + 1))
if n > 0 then
  local time = redis.call('TIME')
  local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  redis.call('HSET', KEYS[2], 'through', through, 'at', string.format('%d', now))
  if chain then redis.call('HSET', KEYS[2], 'chain', chain) end
  redis.call('HINCRBY', KEYS[2], 'records', n)
end
return n
