//! Built-in mannequin.
