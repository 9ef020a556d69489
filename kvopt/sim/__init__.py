"""Simulation of online policies (see the simulator issue); ``admission`` holds MC-SF's rule."""
