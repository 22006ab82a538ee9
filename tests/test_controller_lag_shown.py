"""The controller's lag where the user sees it (issue 32): the lag watch (session/lag.py)
emits through the session's sinks (session/sinks.py) into the console's state; the header
shows how far behind the controller is while it is, the session log says that it fell
behind and that it caught up (once each, not every figure), and the header's figure goes
once it caught up. (stderr of ``benchtui run``: tests/test_controller_overload.py.)"""

from __future__ import annotations

import pytest

from benchtui.model import events as ev
from benchtui.session.lag import BEHIND, LagWatch
from benchtui.session.sinks import Sinks
from benchtui.ui.app import ConsoleApp
from benchtui.ui.screens import SessionLogScreen
from benchtui.ui.source import StaticSource
from tests.test_ui_app import screen_text, settle
from tests.ui_data import NOW, fleet_state

pytestmark = pytest.mark.usefixtures("utc_clock")


async def test_the_header_and_the_log_say_how_far_behind_the_controller_is() -> None:
    state = fleet_state(2)
    sinks = Sinks(histogram_bits=6)
    sinks.events.append(state.on_event)
    watch = LagWatch(lambda now: 0.0, sinks.emit)
    app = ConsoleApp(StaticSource(state, NOW))
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot, app)
        assert "behind" not in app.header.render().plain
        logged = state.events_total

        watch.look(100.0, BEHIND + 3.2)  # behind: said, and shown
        await settle(pilot, app)
        assert "behind 4s" in app.header.render().plain
        watch.look(100.5, 6.6)  # a figure for the header only
        await settle(pilot, app)
        assert "behind 7s" in app.header.render().plain
        assert state.controller_lag == 6.6
        watch.look(101.0, 0.2)  # caught up
        await settle(pilot, app)
        assert "behind" not in app.header.render().plain
        assert state.controller_lag is None

        lag_events = [e for e in state.events if e.kind == ev.CONTROLLER_LAG]
        assert state.events_total - logged == len(lag_events) == 2
        assert "the controller is behind by 4.2 s" in lag_events[0].message
        assert lag_events[0].level == ev.WARNING
        assert "caught up: it was behind for 1 s, by 6.6 s at worst" in lag_events[1].message
        await pilot.press("l")
        await settle(pilot, app)
        assert isinstance(app.screen, SessionLogScreen)
        text = screen_text(app)
        assert "the controller is behind by 4.2 s" in text
        assert "the controller caught up" in text
