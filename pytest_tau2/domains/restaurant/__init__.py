"""Pizza Palace: the in-repo worked example of a custom domain."""

from pytest_tau2.domains.restaurant.base import PIZZA_PALACE_MENU, RestaurantBaseScenario
from pytest_tau2.domains.restaurant.tools import GetMenuTool, PlaceOrderTool

__all__ = ["PIZZA_PALACE_MENU", "GetMenuTool", "PlaceOrderTool", "RestaurantBaseScenario"]
