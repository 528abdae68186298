//! Python bindings
