//! Scenario configuration, topology builder, run loop and metrics
