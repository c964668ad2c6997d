-- trim_log.lua: compact the mutation log through one record in one step: write the
-- checkpoint that holds the result of the records trimmed, trim them, and mark how far the
-- log was compacted with what vouches for it. Nothing is done when another compaction moved
-- the mark since the checkpoint was carried from it.
--
-- KEYS[1] mutation log     {ws:<id>}:log
-- KEYS[2] compaction mark  {ws:<id>}:compacted   hash (below)
-- KEYS[3] checkpoint       {ws:<id>}:checkpoint
-- KEYS[4] checkpoint id    {ws:<id>}:checkpoint:at
-- ARGV[1] the last log id to trim ("<ms>-<seq>"): the last record the checkpoint covers
-- ARGV[2] the checkpoint's text (JSON): the state the records through ARGV[1] leave
-- ARGV[3] the mark's through the checkpoint was carried from ('' when there was no mark)
-- ARGV[4] '1' to write the checkpoint and the mark even when nothing is trimmed (sealing a
--         mark of an older release), else '0'
-- ARGV[5] the last log id the checkpoint covers: ARGV[1], or later when the checkpoint it
--         was carried from reached further (records still in the log, which replay skips)
-- ARGV[6] the SHA-1 of ARGV[2], taken by the caller (hashing a large checkpoint here would
--         hold up every other client of the server for as long)
--
-- The mark: through (ARGV[1]); records, how many were trimmed in all; first, the first log
-- id ever trimmed ('' when an older release trimmed first, without saying); at, the server
-- time; chain, the chain field ("<n>:<hash>") of record through ('' when it had none: only
-- records older than the chain were trimmed), from which the records left verify; and
-- checkpoint, the SHA-1 of ARGV[2] (ARGV[6]). Verifying the chain checks all of them
-- (core/state/chain/start.py); a mark of an older release has no first and no checkpoint.
--
-- Returns the number of records trimmed, or -1 (nothing done) when the mark is not at
-- ARGV[3].

local through, text, base = ARGV[1], ARGV[2], ARGV[3]
local marked = redis.call('HGET', KEYS[2], 'through') or ''
if marked ~= base then return -1 end

local ms, seq = string.match(through, '^(%d+)-(%d+)$')
local oldest = redis.call('XRANGE', KEYS[1], '-', '+', 'COUNT', 1)

-- the chain's link to what goes: kept with the mark, in the same step as the trim
local chain = ''
local last = redis.call('XRANGE', KEYS[1], through, through)
if last[1] then
  local rec = last[1][2]
  for i = 1, #rec, 2 do
    if rec[i] == 'chain' then chain = rec[i + 1] end
  end
elseif through == marked then  -- sealing: the record went with an older compaction
  chain = redis.call('HGET', KEYS[2], 'chain') or ''
end

local n = redis.call('XTRIM', KEYS[1], 'MINID', string.format('%d-%d', tonumber(ms), tonumber(seq) + 1))
if n == 0 and ARGV[4] ~= '1' then return 0 end

local first = redis.call('HGET', KEYS[2], 'first') or ''
if marked == '' and oldest[1] then first = oldest[1][1] end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('SET', KEYS[3], text)
redis.call('SET', KEYS[4], ARGV[5])
redis.call('HSET', KEYS[2], 'through', through, 'at', string.format('%d', now), 'chain', chain,
           'first', first, 'checkpoint', ARGV[6])
redis.call('HINCRBY', KEYS[2], 'records', n)
return n
