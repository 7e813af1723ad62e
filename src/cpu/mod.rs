//! CPU mirrors.
