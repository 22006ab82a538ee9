"""The console's figures: ``benchtui.store.figures``, the one definition of a host's and the
fleet's figures (the console, the figure track, the ghost and the report's plots use it),
under the name the widgets import."""

from benchtui.store.figures import *  # noqa: F403
