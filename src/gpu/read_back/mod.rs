//! Reading GPU data back to the CPU, in one of two ways:
//!
//! - **Without waiting**, for a running app: watches ([`Animator::watch_sockets`],
//!   [`Animator::watch_outputs`], [`Animator::watch_events`]) choose what every frame copies into
//!   a ring of [`READBACK_SLOTS`] readback buffers at the end of its passes; each prepare maps
//!   the slots the GPU has finished with, never blocking, and [`Animator::take_readbacks`] hands
//!   over one [`FrameReadback`] per frame, tagged with it, a frame or more late (`ring.rs`, the
//!   ring; `watch.rs`, the watches and their decoding). A frame that finds every slot in flight
//!   is skipped, not waited for.
//! - **Blocking**, for tools and tests: copy, map and wait for the GPU, at once
//!   ([`read_buffer`] and [`read_buffer_async`] for any buffer, in `buffer.rs`;
//!   [`Animator::read_page_buffer`] for any page buffer by its resource, in `page_buffer.rs`;
//!   the animator's reads of every stage's output, [`Animator::read_back`],
//!   [`Animator::read_blend_lists`], [`Animator::read_sockets_page`] and the others, in
//!   `stages.rs`). Natively they wait inside; in a browser, which cannot block, only the
//!   `..._async` forms exist, to be `.await`ed.
//!
//! [`Animator::watch_sockets`]: super::Animator::watch_sockets
//! [`Animator::watch_outputs`]: super::Animator::watch_outputs
//! [`Animator::watch_events`]: super::Animator::watch_events
//! [`Animator::take_readbacks`]: super::Animator::take_readbacks
//! [`Animator::read_page_buffer`]: super::Animator::read_page_buffer
//! [`Animator::read_back`]: super::Animator::read_back
//! [`Animator::read_blend_lists`]: super::Animator::read_blend_lists
//! [`Animator::read_sockets_page`]: super::Animator::read_sockets_page

mod buffer;
mod page_buffer;
pub(super) mod ring;
#[cfg(not(target_arch = "wasm32"))]
mod stages;
mod watch;

#[cfg(not(target_arch = "wasm32"))]
pub(crate) use buffer::read_at;
pub(crate) use buffer::read_at_async;
#[cfg(not(target_arch = "wasm32"))]
pub use buffer::read_buffer;
pub use buffer::read_buffer_async;
pub use ring::READBACK_SLOTS;
pub use watch::FrameReadback;
pub(super) use watch::Watches;
