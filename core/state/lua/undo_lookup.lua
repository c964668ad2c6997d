-- undo_lookup.lua: what a revert must know of the mutation it undoes, in one round trip:
-- its log record, found through its idempotency record rather than by scanning the log,
-- the server's clock, its key's version now, and whether the revert committed already.
--
-- KEYS[1] the mutation's idempotency record  {ws:<id>}:idem:<mid>  ("<logId>\n...")
-- KEYS[2] the mutation log                   {ws:<id>}:log
-- KEYS[3] the version hash                   {ws:<id>}:versions
-- KEYS[4] the revert's idempotency record    {ws:<id>}:idem:revert-<mid>
--
-- Returns {seconds, microseconds} (TIME) alone when the idempotency record has lapsed, the
-- log no longer holds the record or its mutation is not JSON (the caller looks in the log
-- itself); else {seconds, microseconds, log id, the record's fields (flat), the key's
-- version now ('0' if never written), 1 if the revert's idempotency record exists else 0}.

local time = redis.call('TIME')
local first = redis.call('GET', KEYS[1])
if not first then return {time[1], time[2]} end
local cut = string.find(first, '\n', 1, true)
if not cut then return {time[1], time[2]} end
local log_id = string.sub(first, 1, cut - 1)
local rows = redis.call('XRANGE', KEYS[2], log_id, log_id)
if not rows[1] then return {time[1], time[2]} end
local fields, key = rows[1][2], nil
for i = 1, #fields, 2 do
  if fields[i] == 'mutation' then
    local ok, mutation = pcall(cjson.decode, fields[i + 1])
    if ok and type(mutation) == 'table' and type(mutation.key) == 'string' then
      key = mutation.key
    end
  end
end
if not key then return {time[1], time[2]} end
local version = redis.call('HGET', KEYS[3], key) or '0'
return {time[1], time[2], log_id, fields, version, redis.call('EXISTS', KEYS[4])}
