"""The scripted 50-turn conversation the benches share: a team planning its Q3 offsite
(brainstorm, refine, questions, tangents, two commits each followed by a "Use this" click),
with what the scripted model answers to each turn."""

from __future__ import annotations

from dataclasses import dataclass

from core.state.actor import Actor, ActorKind

TOPIC = "Plan the Q3 team offsite"
ALICE = Actor(kind=ActorKind.USER, id="alice", platform="bench")


@dataclass(frozen=True)
class Step:
    """One user turn, with what the scripted model answers to it."""

    act: str
    text: str
    reply: str
    candidate: str | None = None
    summary: str | None = None
    constraint: str | None = None
    question: str | None = None
    resolves: str | None = None
    rejected: str | None = None
    click: bool = False  # then someone clicks "Use this" (ConfirmCurrent) on the candidate


Q_HEADCOUNT = "What is the current team headcount?"
Q_LAST_YEAR = "How did last year's offsite go, and where was it?"
Q_DRINK = "Are non-drinkers comfortable with a vineyard venue?"
Q_DRIVE = "How long is the drive to the lakeside camp?"
Q_BUS = "What does a chartered bus for 14 people cost for a day?"
Q_WIFI = "Does the camp have wifi for the planning session?"
Q_FACILITATOR = "Who facilitates the retro and the goals session?"
Q_FEE = "Would an external facilitator's fee fit the budget?"
Q_SCREEN = "Is there a screen for a video call at the camp?"
Q_BOOK_BY = "By when must the camp be booked?"

VENUE = (
    "Two days at a lakeside camp 90 minutes away, chartered bus from the office: a half-day "
    "planning block in the dining hall (printed agenda, own projector), canoeing in the "
    "afternoon, campfire on the first night."
)
AGENDA = (
    "Day 1: 9:00 Q2 retro (90 min, Priya facilitates), 11:00 Q3 goals in small groups of "
    "3-4 (45 min) then merge, afternoon canoeing, campfire. Day 2: 9:00-12:30 internal-tools "
    "hackathon, 13:30 demos (5 min per team), 15:45 wrap-up, 16:15 bus back. Contractors "
    "welcome on day 2 (optional). Prep: dietary survey next week, book by month end."
)

CONVERSATION: tuple[Step, ...] = (
    Step(
        "brainstorm",
        "We need a plan for the Q3 offsite. What if we rented a cabin in the mountains for "
        "two days?",
        "A cabin keeps the group together and away from laptops. Here's a first shape for it.",
        "Two-day cabin retreat in the mountains: day one for Q3 planning, day two for a group "
        "hike.",
        summary="Planning the Q3 team offsite; first idea: a two-day mountain cabin retreat.",
    ),
    Step(
        "question",
        "How many people are on the team right now?",
        "I don't have the headcount in what I know; I've noted it as an open question.",
        question=Q_HEADCOUNT,
    ),
    Step(
        "refine",
        "14, counting the two new hires. Make it a place that sleeps at least 14.",
        "Updated: the venue has to sleep all 14 of you.",
        "Two-day retreat at a mountain lodge that sleeps 14 or more: day one for Q3 planning, "
        "day two for a group hike.",
        constraint="The venue must sleep 14 people",
        resolves=Q_HEADCOUNT,
    ),
    Step(
        "refine",
        "Budget is capped at 300 per person, travel included.",
        "Noted the cap; a lodge within driving distance should fit it.",
        "Two-day retreat at a mountain lodge within driving distance that sleeps 14, at most "
        "300 per person with travel: day one Q3 planning, day two group hike.",
        constraint="Budget: at most 300 per person, travel included",
    ),
    Step(
        "brainstorm",
        "Or we could skip the travel and do a city hotel with a nice conference room.",
        "That saves the travel budget. Here's the city version.",
        "Two days at a city hotel with a conference room: planning sessions in the mornings, "
        "team activities in the afternoons.",
        summary="Q3 offsite for 14 people, at most 300 per person with travel. Options so far: a "
        "mountain lodge, or a city hotel with a conference room.",
    ),
    Step(
        "tangent",
        "lol the coffee machine on 3 is broken again",
        "Sorry about the coffee. Back to the offsite: city hotel or mountain lodge?",
    ),
    Step(
        "question",
        "Did we do a city hotel last year? I can't remember how it went.",
        "I don't know where last year's offsite was; I've added it to the open questions.",
        question=Q_LAST_YEAR,
    ),
    Step(
        "refine",
        "Same idea but somewhere with outdoor space, people hated being indoors all day last time.",
        "So last year was indoors all day and that didn't land. Here's a version with outdoor "
        "space.",
        "Two days at a hotel on the edge of the city with a conference room and grounds: "
        "planning in the mornings, outdoor activities in the afternoons.",
        constraint="Needs outdoor space: last year's all-indoor offsite did not go well",
        resolves=Q_LAST_YEAR,
    ),
    Step(
        "brainstorm",
        "What about a vineyard? Some of them rent out their event barns.",
        "A vineyard barn gives you both the room and the outdoors. Here's how it could look.",
        "Two days at a vineyard event barn near the city: planning in the barn in the "
        "mornings, a vineyard tour and outdoor games in the afternoons.",
        summary="Q3 offsite for 14, at most 300 per person with travel, with outdoor space "
        "(last year was all indoors). Options: mountain lodge, city-edge hotel, vineyard barn.",
    ),
    Step(
        "question",
        "Is a vineyard ok for people who don't drink?",
        "It can be, if the activities don't centre on tasting. Worth asking the team; I've "
        "noted it.",
        question=Q_DRINK,
    ),
    Step(
        "refine",
        "Make the afternoon something other than wine tasting then, like a cooking class.",
        "Swapped the tour for a cooking class, so the afternoon works for everyone.",
        "Two days at a vineyard event barn near the city: planning in the barn in the "
        "mornings, a cooking class and outdoor games in the afternoons.",
        resolves=Q_DRINK,
    ),
    Step(
        "tangent",
        "btw did anyone watch the game last night",
        "I'll leave the game to you. Still on the table: the vineyard barn with a cooking class.",
    ),
    Step(
        "brainstorm",
        "Another option: a lakeside camp with cabins, canoes and a big dining hall.",
        "A camp fits 14 easily and has the outdoors built in. Here's the lakeside version.",
        "Two days at a lakeside camp: cabins for 14, planning in the dining hall, canoeing in "
        "the afternoon and a campfire in the evening.",
        summary="Q3 offsite for 14, at most 300 per person with travel, outdoors matters. "
        "Options: city-edge hotel, vineyard barn with a cooking class, lakeside camp with "
        "canoes.",
    ),
    Step(
        "question",
        "How far is the lake from the office?",
        "I can't check distances; I've added the drive time to the open questions.",
        question=Q_DRIVE,
    ),
    Step(
        "refine",
        "It's about 90 minutes. Add a shared bus so nobody has to drive.",
        "Added a chartered bus from the office.",
        "Two days at a lakeside camp 90 minutes away, chartered bus from the office: cabins "
        "for 14, planning in the dining hall, canoeing in the afternoon, campfire in the "
        "evening.",
        resolves=Q_DRIVE,
    ),
    Step(
        "question",
        "What would a bus for 14 cost roughly?",
        "Usually a few hundred for a day charter, but I can't check prices; noted as open.",
        question=Q_BUS,
    ),
    Step(
        "refine",
        "Shorten the planning block to a half day, nobody focuses after lunch.",
        "Planning is now a half-day block in the morning.",
        "Two days at a lakeside camp 90 minutes away, chartered bus from the office: a "
        "half-day planning block in the dining hall, canoeing in the afternoon, campfire in "
        "the evening.",
    ),
    Step(
        "tangent",
        "brb, fire alarm drill",
        "See you in a bit. The lakeside camp plan is still on the table.",
    ),
    Step(
        "refine",
        "And put the campfire on the first night, not the second.",
        "Campfire moved to the first night.",
        "Two days at a lakeside camp 90 minutes away, chartered bus from the office: a "
        "half-day planning block in the dining hall, canoeing in the afternoon, campfire on "
        "the first night.",
    ),
    Step(
        "question",
        "Does the camp have wifi for the planning session?",
        "I don't know; I've added it to the open questions. It's safer to plan without it.",
        question=Q_WIFI,
    ),
    Step(
        "refine",
        "Assume no wifi; we'll print the agenda and bring a projector.",
        "Planned for no wifi: printed agenda and our own projector.",
        VENUE,
        constraint="Plan for no wifi at the venue: printed agenda, our own projector",
        resolves=Q_WIFI,
    ),
    Step(
        "commit",
        "Ok, lakeside camp it is. Let's lock that in.",
        f'Sounds like agreement on: "{VENUE}" Use the "Use this" button to lock it in.',
        click=True,
    ),
    Step(
        "brainstorm",
        "Now the agenda. What if we open with a retro on Q2 before any Q3 planning?",
        "Starting with a retro clears the air before planning. Here's a first agenda.",
        "Day 1: 9:00 Q2 retro (60 min), 10:15 Q3 goals draft, 12:00 lunch, canoeing in the "
        "afternoon, campfire in the evening.",
        summary="The venue is decided: a lakeside camp 90 minutes away with a chartered bus, no "
        "wifi. Now drafting the agenda, starting with a Q2 retro on day 1.",
    ),
    Step(
        "question",
        "How long do retros usually take with 14 people?",
        "Usually 60 to 90 minutes for a group of 14, so everyone gets heard.",
    ),
    Step(
        "refine",
        "Make the retro 90 minutes then, and push the goals draft to 11:00.",
        "Retro is 90 minutes now; the goals draft starts at 11:00.",
        "Day 1: 9:00 Q2 retro (90 min), 11:00 Q3 goals draft, 12:30 lunch, canoeing in the "
        "afternoon, campfire in the evening.",
    ),
    Step(
        "tangent",
        "anyone else's laptop dying on the new update?",
        "Can't help with the update, sorry. Back to the day 1 agenda?",
    ),
    Step(
        "brainstorm",
        "Could we do the goals draft in small groups of 3-4 and then merge?",
        "Small groups get more voices in. Here's the agenda with them.",
        "Day 1: 9:00 Q2 retro (90 min), 11:00 Q3 goals in small groups of 3-4, then merge, "
        "12:30 lunch, canoeing in the afternoon, campfire in the evening.",
        summary="Venue decided (lakeside camp, bus, no wifi). Day 1 agenda: a 90-minute Q2 "
        "retro, then Q3 goals drafted in small groups and merged, canoeing, campfire.",
    ),
    Step(
        "refine",
        "Keep the small groups but cap them at 45 minutes.",
        "Capped the small groups at 45 minutes.",
        "Day 1: 9:00 Q2 retro (90 min), 11:00 Q3 goals in small groups of 3-4 (45 min), then "
        "merge, 12:30 lunch, canoeing in the afternoon, campfire in the evening.",
    ),
    Step(
        "question",
        "Who's facilitating? Do we have someone neutral?",
        "Nobody is named yet; I've added it to the open questions.",
        question=Q_FACILITATOR,
    ),
    Step(
        "brainstorm",
        "Maybe we hire an external facilitator for day one.",
        "An outside facilitator keeps the retro neutral. Here's day 1 with one.",
        "Day 1 with an external facilitator: 9:00 Q2 retro (90 min), 11:00 Q3 goals in small "
        "groups (45 min), then merge, 12:30 lunch, canoeing, campfire.",
    ),
    Step(
        "question",
        "Would a facilitator fit in the 300 per person budget?",
        "The total is about 4,200 for 14 people; whether a facilitator fits depends on the "
        "venue and bus costs. Noted as open.",
        question=Q_FEE,
    ),
    Step(
        "refine",
        "Drop the external facilitator, Priya offered to facilitate.",
        "Priya facilitates; no external facilitator.",
        "Day 1: 9:00 Q2 retro (90 min, Priya facilitates), 11:00 Q3 goals in small groups of "
        "3-4 (45 min), then merge, 12:30 lunch, canoeing, campfire.",
        summary="Venue decided (lakeside camp, bus, no wifi). Day 1: 90-minute Q2 retro led by "
        "Priya, Q3 goals in small groups of 3-4 for 45 minutes then merged, canoeing, campfire. "
        "Day 2 still open.",
        rejected="Hiring an external facilitator (Priya facilitates instead)",
        resolves=Q_FACILITATOR,
    ),
    Step(
        "tangent",
        "happy friday everyone 🎉",
        "Happy Friday! Day 2 of the agenda is still open when you're back.",
    ),
    Step(
        "brainstorm",
        "For day two, what about a half-day hackathon on internal tools?",
        "A hackathon gives day 2 a concrete output. Here's the plan with it.",
        "Day 1 as agreed. Day 2: 9:00-12:30 internal-tools hackathon in teams of 3-4, 13:30 "
        "demos, 15:00 bus back.",
    ),
    Step(
        "refine",
        "Make the demos shorter, 5 minutes per team.",
        "Demos are 5 minutes per team now.",
        "Day 1 as agreed. Day 2: 9:00-12:30 internal-tools hackathon in teams of 3-4, 13:30 "
        "demos (5 min per team), 15:00 bus back.",
    ),
    Step(
        "question",
        "What time does the bus have to leave to be back by 6?",
        "With a 90-minute drive, leaving at 16:15 gets you back around 17:45.",
    ),
    Step(
        "refine",
        "Move the bus to 16:15 then and add a 30 minute wrap-up before it.",
        "Bus at 16:15, with a wrap-up at 15:45.",
        "Day 1 as agreed. Day 2: 9:00-12:30 internal-tools hackathon in teams of 3-4, 13:30 "
        "demos (5 min per team), 15:45 wrap-up, 16:15 bus back.",
    ),
    Step(
        "brainstorm",
        "Or instead of a hackathon, a customer panel over video?",
        "Hearing from customers would ground the Q3 goals. Here's day 2 with a panel.",
        "Day 1 as agreed. Day 2: 9:30 customer panel over video (3 customers, 60 min), 11:00 "
        "discussion of what we heard, 13:30 Q3 goals revisited, 16:15 bus back.",
    ),
    Step(
        "question",
        "Does the camp even have a screen for a video call, given no wifi?",
        "Without wifi a video call is risky; I've noted the screen and connection as open.",
        question=Q_SCREEN,
    ),
    Step(
        "refine",
        "Good point, go back to the hackathon version, it works offline.",
        "Back to the hackathon, which needs no connection.",
        "Day 1 as agreed. Day 2: 9:00-12:30 internal-tools hackathon in teams of 3-4, 13:30 "
        "demos (5 min per team), 15:45 wrap-up, 16:15 bus back.",
        summary="Venue decided (lakeside camp, bus, no wifi). Day 1: Q2 retro led by Priya, Q3 "
        "goals in small groups, canoeing, campfire. Day 2: offline hackathon on internal "
        "tools, 5-minute demos, wrap-up, bus back at 16:15.",
        rejected="A customer panel over video (no wifi at the camp)",
        resolves=Q_SCREEN,
    ),
    Step(
        "tangent",
        "my dog just ate a sock, be right back",
        "Good luck with the dog! The day 2 plan will be here.",
    ),
    Step(
        "refine",
        "Add a dietary-needs survey to the prep list before the trip.",
        "Added a dietary survey to the prep list.",
        "Day 1 as agreed. Day 2: 9:00-12:30 internal-tools hackathon, 13:30 demos (5 min per "
        "team), 15:45 wrap-up, 16:15 bus back. Prep: dietary-needs survey.",
        constraint="Collect dietary needs before the camp orders food",
    ),
    Step(
        "question",
        "When do we need to book the camp by?",
        "I don't know the camp's booking deadline; I've added it to the open questions.",
        question=Q_BOOK_BY,
    ),
    Step(
        "refine",
        "Say we book by the end of the month and send the survey next week.",
        "Booking by month end, survey next week.",
        "Day 1 as agreed. Day 2: 9:00-12:30 internal-tools hackathon, 13:30 demos (5 min per "
        "team), 15:45 wrap-up, 16:15 bus back. Prep: dietary survey next week, book by month "
        "end.",
        resolves=Q_BOOK_BY,
    ),
    Step(
        "brainstorm",
        "Could we also invite the two contractors for day two only?",
        "The hackathon would benefit from them. Here's the plan with the contractors on day 2.",
        "Day 1 as agreed. Day 2 with the two contractors: 9:00-12:30 internal-tools "
        "hackathon, 13:30 demos (5 min per team), 15:45 wrap-up, 16:15 bus back. Prep: "
        "dietary survey next week, book by month end.",
    ),
    Step(
        "question",
        "Would that change the bus size?",
        "16 people still fit a standard minibus, so probably not, but check with the charter "
        "company.",
    ),
    Step(
        "refine",
        "Keep the contractors, but make it clear it's optional for them.",
        "Made day 2 optional for the contractors.",
        AGENDA,
    ),
    Step(
        "tangent",
        "lunch is here, pizza in the kitchen",
        "Enjoy the pizza! The full agenda is ready for a decision when you are.",
    ),
    Step(
        "commit",
        "That's the agenda then, let's go with it.",
        f'Sounds like agreement on: "{AGENDA}" Use the "Use this" button to lock it in.',
        click=True,
        summary="Venue and agenda decided: lakeside camp with a bus, Day 1 retro, goals, "
        "canoeing and campfire, Day 2 hackathon and demos. Open: bus cost, facilitator fee, "
        "booking deadline.",
    ),
    Step(
        "brainstorm",
        "One more idea for the first evening: a stargazing walk after the campfire?",
        "The lake should be dark enough for it. Here's the evening with a walk.",
        "First evening: campfire from 19:30, then an optional 45-minute stargazing walk along "
        "the lake, back by 22:00.",
    ),
)
