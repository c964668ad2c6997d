-- sweep_index.lua: drop from the key index the keys whose entry Redis has expired (or that
-- have no entry for any other reason), so that the index holds live keys only.
--
-- KEYS[1]    key index   {ws:<id>}:keys
-- KEYS[2..n] the entries {ws:<id>}:entry:<key> of ARGV[1..n-1], in that order
-- ARGV       the state keys
--
-- A commit that writes a key again adds it back (commit.lua ZADDs when the entry was gone).
-- Returns how many keys were dropped.

local dropped = 0
for i = 1, #ARGV do
  if redis.call('EXISTS', KEYS[i + 1]) == 0 then
    dropped = dropped + redis.call('ZREM', KEYS[1], ARGV[i])
  end
end
return dropped
