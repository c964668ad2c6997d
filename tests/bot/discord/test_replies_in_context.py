"""A turn's context says whether it replies to someone (issue 42), as Discord's messages
tell: a reply (``message_reference``, type 19), or a person other than the bot mentioned;
a plain message to the bot replies to nobody. Kept in the session's last turns as a
feature (never the words)."""

from __future__ import annotations

from bot.app import App
from tests.bot.discord import payloads
from tests.bot.discord.payloads import ALICE, BOT_ID, CHANNEL, GUILD, SAM
from tests.bot.discord.rig import DiscordBot


def test_a_discord_reply_or_a_person_mentioned_is_a_reply(bot: DiscordBot, team_app: App) -> None:
    first = bot.say("what if we used postgres")
    reply = payloads.message_create("with a replica", author=SAM)
    reply |= {
        "type": 19,
        "message_reference": {"message_id": first["id"], "channel_id": CHANNEL, "guild_id": GUILD},
    }
    bot.dispatch("MESSAGE_CREATE", reply)
    naming = payloads.message_create(f"<@{ALICE}> what do you think", author=SAM)
    naming["mentions"] = [*naming["mentions"], payloads.user(ALICE)]
    bot.dispatch("MESSAGE_CREATE", naming)
    bot.say("and nightly backups", author=SAM)
    state = team_app.runtime(use_env=False).sessions.load(f"discord:{CHANNEL}").interaction
    assert [t.replying for t in state.recent] == [False, True, True, False]
    assert BOT_ID not in {t.who for t in state.recent}
