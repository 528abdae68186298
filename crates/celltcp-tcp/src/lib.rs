//! A sans-IO TCP endpoint with pluggable congestion control (NewReno, CUBIC, BBR)
