//! Clip events as the library holds them and as the clock stage appends them to the event log
//! (state machines' events share the log: [`super::MACHINE_EVENT_CLIP`]).

/// Most events of one clip.
pub const MAX_CLIP_EVENTS: u32 = 64;

/// A clip event as the GPU reads it (the library heap's header sections, one unit each). WGSL `ClipEvent`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct GpuEvent {
    /// Seconds into the clip.
    pub time: f32,
    /// The event's name, an index into [`crate::AnimationLibrary::event_names`].
    pub name: u32,
    /// Least blend weight of the clip for it to fire.
    pub threshold: f32,
    /// Padding.
    pub _pad: u32,
}

wgsl_struct! {
    /// One fired event, as the clock stage appends it to the event log. WGSL `EventRecord`.
    #[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
    pub struct GpuEventRecord as "EventRecord" {
        /// The character (the animator's instance index).
        pub character: u32,
        /// The event's name, an index into [`crate::AnimationLibrary::event_names`].
        pub event: u32,
        /// The clip whose playback crossed it.
        pub clip: u32,
        /// The clip's blend weight this frame (for a layer's clip, the layer's weight times its
        /// weight in the layer).
        pub weight: f32,
        /// The frame ([`super::GpuFrame::frame`]).
        pub frame: u32,
        /// Times playback crossed the event this frame: 1, or more when one frame spans several
        /// loops.
        pub crossings: u32,
        /// Which state played the clip: 0 the target, 1 a cross-fade's source, `2 + k` layer `k`;
        /// for a state machine's event ([`super::MACHINE_EVENT_CLIP`]), the state or transition it
        /// names, with its kind (`machine_event::*`) in `event`.
        pub state: u32,
        /// Padding.
        pub _pad: u32,
    }
}
const _: () = assert!(std::mem::size_of::<GpuEventRecord>() == 32);

/// The head of the event log buffer (WGSL `EventLog`, whose `records` follow): the records
/// appended, counting those that did not fit.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct GpuEventLogHead {
    /// Records appended this frame, those past the capacity included.
    pub count: u32,
    /// Records that did not fit (each counted once).
    pub overflow: u32,
    /// Padding.
    pub _pad: [u32; 2],
}
