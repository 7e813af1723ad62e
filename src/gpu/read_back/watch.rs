//! What an animator reads back every frame without waiting — socket matrices, characters'
//! outputs, clip events — through its ring of readback buffers: each watch is a part of the
//! ring's slots ([`RingPart`]) that names the resource it reads (the socket matrices of
//! [`Resource::Palettes`], the outputs section of [`Resource::CharacterState`], the event log
//! [`Resource::Events`]), and [`decode`] makes a [`FrameReadback`] of a slot's parts.

use super::ring::{Ring, RingCopy, RingLayout, RingPart};
use crate::error::{Error, Result};
use crate::gpu::animator::{Animator, event_log_buffer};
use crate::gpu::page::Page;
use crate::layout::{GpuEventLogHead, GpuEventRecord, GpuMachineState, GpuOutput, MACHINE_EVENT_CLIP, MAX_SOCKETS};
use crate::math::Affine;
use crate::shaders::Resource;

/// What frames computed, read back without waiting. `#[non_exhaustive]`: it gains a field with
/// each thing a frame can be watched for; read its fields.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct FrameReadback {
    /// The frame ([`crate::Animator::frame`] when it was prepared).
    pub frame: u64,
    /// The watched sockets' world matrices, in the order given to
    /// [`crate::Animator::watch_sockets`].
    pub sockets: Vec<Affine>,
    /// The watched characters' outputs — root motion (world transform, the frame's
    /// displacement) and float curves — in the order given to
    /// [`crate::Animator::watch_outputs`].
    pub outputs: Vec<GpuOutput>,
    /// The clip events the frame fired ([`crate::Animator::watch_events`]), in the order the GPU
    /// appended them (any order within a frame).
    pub events: Vec<GpuEventRecord>,
    /// Events the frame fired that did not fit the log (counted, not kept).
    pub events_overflow: u32,
    /// The state machines' events the frame emitted (the same log, [`crate::Animator::watch_events`]):
    /// the character (its animator index) and the event, each character's in the order its
    /// machine emitted them ([`crate::machine`]: `state_entered`, `transition_ended`,
    /// `state_exited`, `transition_started`), exactly once each.
    pub machine_events: Vec<(u32, crate::cpu::machine::MachineEvent)>,
    /// The watched characters' state machines after the frame ([`crate::Animator::watch_machines`]),
    /// in the order given: the state playing, its normalized time, the transition running
    /// ([`GpuMachineState::playing`] and its neighbours say them).
    pub machines: Vec<GpuMachineState>,
}

/// The resource each watch reads: sockets, outputs, events, machines.
const SOCKETS: Resource = Resource::Palettes;
const OUTPUTS: Resource = Resource::CharacterState;
const EVENTS: Resource = Resource::Events;
const MACHINES: Resource = Resource::MachineStates;
// The binding table says each may be read back.
const _: () = assert!(SOCKETS.read_back() && OUTPUTS.read_back() && EVENTS.read_back() && MACHINES.read_back());

/// What an animator watches: the ring its watches read back through and the event log its
/// clock (or fused) passes append to. The animator owns one; only this module changes it.
pub(in crate::gpu) struct Watches {
    /// The event log every page's clock (or fused) pass appends to ([`Animator::watch_events`]).
    event_log: wgpu::Buffer,
    /// Records the event log holds; 0 when events are not watched.
    event_capacity: u32,
    /// Watched sockets read back every frame ([`Animator::watch_sockets`]).
    ring: Option<Ring<FrameReadback>>,
}

impl Watches {
    /// Nothing watched: an event log of no record, no ring.
    pub(in crate::gpu) fn new(device: &wgpu::Device) -> Self {
        Self {
            event_log: event_log_buffer(device, 0),
            event_capacity: 0,
            ring: None,
        }
    }

    /// The event log (of [`Watches::event_capacity`] records).
    pub(in crate::gpu) fn event_log(&self) -> &wgpu::Buffer {
        &self.event_log
    }

    /// Records the event log holds; 0 when events are not watched.
    pub(in crate::gpu) fn event_capacity(&self) -> u32 {
        self.event_capacity
    }

    /// Starts frame `frame` in the ring, if there is one (`encoded`: whether the last frame's
    /// passes were encoded).
    pub(in crate::gpu) fn begin_frame(&mut self, frame: u64, encoded: bool) {
        if let Some(ring) = &mut self.ring {
            ring.begin_frame(frame, encoded);
        }
    }

    /// Takes over `old`'s watches on `device`, a rebuild's: its ring moved there and, when
    /// events are watched, an event log of its capacity. Returns whether the event log changed
    /// (the pages bind it again).
    ///
    /// Errors: an event log the device refuses.
    pub(in crate::gpu) fn take_over(&mut self, device: &wgpu::Device, old: &Watches) -> Result<bool> {
        self.ring = old.ring.as_ref().map(|r| r.moved_to(device));
        if old.event_capacity > 0 {
            self.event_log = crate::gpu::refusable_now(
                device,
                || "the event log".to_owned(),
                || event_log_buffer(device, old.event_capacity),
            )?;
            self.event_capacity = old.event_capacity;
            return Ok(true);
        }
        Ok(false)
    }

    /// What the ring copies now (nothing when nothing is watched).
    fn ring_layout(&self) -> RingLayout {
        self.ring.as_ref().map(|r| r.layout.clone()).unwrap_or_default()
    }

    /// Records the copies of this frame, from `pages`, into its slot of the ring, if it has one.
    pub(in crate::gpu) fn copy_to_ring(&self, encoder: &mut wgpu::CommandEncoder, pages: &[Page]) {
        let Some(ring) = &self.ring else { return };
        let Some(slot) = ring.current_buffer() else { return };
        for (at, part) in ring.layout.placed() {
            for c in &part.copies {
                let source = match part.resource {
                    // The animator's one log, shared by its pages.
                    Resource::Events => &self.event_log,
                    per_page => pages[c.page].buffer(per_page),
                };
                encoder.copy_buffer_to_buffer(source, c.src, slot, at + c.dst, c.bytes);
            }
        }
    }
}

// Reading back without waiting: watches of sockets, outputs and events, through the ring.
impl Animator {
    /// Where instance `index`'s socket `socket` (of its skeleton's [`crate::Skeleton::sockets`])
    /// is written each frame: `(page, element)`, the element an `Affine` (3×4 rows, 48 bytes) of
    /// that page's palette buffer. The matrix is `world · model[joint] · offset`, the socket in
    /// world space: a prop drawn with it follows the joint with no CPU work. A page's socket
    /// matrices start after its joint capacity, instance `k` of the page at `k · MAX_SOCKETS`.
    /// `None` for an instance or socket that does not exist.
    #[must_use]
    pub fn socket_slot(&self, index: usize, socket: usize) -> Option<(usize, u64)> {
        let inst = self.controller().instance(index)?;
        let sockets = self.controller().library().gpu_skeletons()[inst.skeleton as usize].socket_count;
        if socket >= sockets as usize {
            return None;
        }
        let (page, k) = self.controller().page_of(index)?;
        let first = u64::from(self.controller().page_max_joints(page));
        Some((page, first + k as u64 * u64::from(MAX_SOCKETS) + socket as u64))
    }

    /// Reads back the world matrices of `sockets` (`(character, socket)` pairs) after every
    /// frame from now on, without the CPU ever waiting for the GPU: each frame's passes end
    /// with a copy into a ring of [`READBACK_SLOTS`](super::READBACK_SLOTS) readback buffers,
    /// which [`Animator::prepare`] maps and reads once the GPU is done with the frame;
    /// [`Animator::take_readbacks`] hands them over, each tagged with its frame. Latency: a
    /// frame's data arrive at the first prepare after the GPU has finished it — the next one
    /// when the GPU keeps up, later when it lags — and a frame that finds every slot still in
    /// flight is not read back ([`Animator::readback_skipped`]) rather than waited for. An
    /// empty list stops reading sockets (events and roots watched go on). Watch again after
    /// adding or removing characters (the matrices are read from where those characters were).
    /// Submit each frame before the next prepare.
    ///
    /// Errors (nothing changes): a character or socket that does not exist (naming it), buffers
    /// the device refuses.
    pub fn watch_sockets(&mut self, device: &wgpu::Device, sockets: &[(usize, usize)]) -> Result<()> {
        let matrix = size_of::<Affine>() as u64;
        let mut copies: Vec<RingCopy> = Vec::new();
        for (k, &(index, socket)) in sockets.iter().enumerate() {
            let (page, element) = self.socket_slot(index, socket).ok_or_else(|| Error::Instance {
                instance: index,
                what: format!("has no socket {socket} to watch (or does not exist)"),
            })?;
            push_copy(&mut copies, page, element * matrix, k as u64 * matrix, matrix);
        }
        let part = RingPart {
            resource: SOCKETS,
            bytes: sockets.len() as u64 * matrix,
            copies,
        };
        self.watches_mut().ring = make_ring(device, self.watches().ring_layout().with(part))?;
        Ok(())
    }

    /// Reads back what the clock stage gives back for `characters` ([`GpuOutput`](crate::layout::GpuOutput)) with every
    /// frame — root motion (world transform, the frame's displacement) and float curve values,
    /// and the IK stage's reached chains —
    /// through the same ring and with the same latency as [`Animator::watch_sockets`]
    /// ([`FrameReadback::outputs`](super::FrameReadback)). The GPU writes a character's root
    /// motion only while it has root motion on ([`Controller::set_root_motion`](crate::gpu::Controller::set_root_motion)), and curves
    /// when the library has any. An empty list stops. Watch again after adding or removing
    /// characters.
    ///
    /// Errors (nothing changes): a character that does not exist, buffers the device refuses.
    pub fn watch_outputs(&mut self, device: &wgpu::Device, characters: &[usize]) -> Result<()> {
        let output = size_of::<GpuOutput>() as u64;
        let mut copies: Vec<RingCopy> = Vec::new();
        for (k, &index) in characters.iter().enumerate() {
            let (page, element) = self.controller().page_of(index).ok_or_else(|| Error::Instance {
                instance: index,
                what: "does not exist: its root cannot be watched".into(),
            })?;
            // The character state's second section: the outputs.
            let sections = OUTPUTS.instance_sections(self.controller().page_capacity(page));
            let outputs = sections.as_slice()[1];
            debug_assert_eq!(outputs.stride, output);
            push_copy(&mut copies, page, outputs.at(element as u64), k as u64 * output, output);
        }
        let part = RingPart {
            resource: OUTPUTS,
            bytes: characters.len() as u64 * output,
            copies,
        };
        self.watches_mut().ring = make_ring(device, self.watches().ring_layout().with(part))?;
        Ok(())
    }

    /// Detects clip events ([`crate::ClipEvent`]) from the next frame on and reads them back
    /// with every frame ([`Animator::take_readbacks`], [`FrameReadback::events`](super::FrameReadback)),
    /// through the same ring and with the same latency as [`Animator::watch_sockets`]; `capacity`
    /// records per frame (0 stops). Each frame the clock stage (or the fused one) appends a
    /// [`GpuEventRecord`] for every event a character's playback of a clip crossed — forward or
    /// backward, through loop wraps, once per crossing (several loops in one frame make one
    /// record with `crossings` > 1) — while the clip's weight is at least the event's
    /// threshold, to a log with an atomic counter; records past `capacity` are counted
    /// ([`FrameReadback::events_overflow`](super::FrameReadback)), never written out of bounds.
    /// The records of one frame come in any order (GPU threads race for the counter).
    ///
    /// Costs, while on: the clock stage compares each playing clip's events with its
    /// time; a 16-byte clear and a copy of `16 + 32 · capacity` bytes per frame.
    ///
    /// Errors (nothing changes): a log larger than the device's storage binding size, buffers the
    /// device refuses.
    pub fn watch_events(&mut self, device: &wgpu::Device, capacity: u32) -> Result<()> {
        let bytes = if capacity == 0 {
            0
        } else {
            (size_of::<GpuEventLogHead>() + capacity as usize * size_of::<GpuEventRecord>()) as u64
        };
        let cap = device.limits().max_storage_buffer_binding_size;
        if bytes > cap {
            return Err(Error::Limit {
                what: format!(
                    "an event log of {capacity} records takes {bytes} bytes; the device allows {cap} per storage buffer"
                ),
            });
        }
        let part = RingPart::whole(EVENTS, bytes);
        let ring = make_ring(device, self.watches().ring_layout().with(part))?;
        let log = crate::gpu::refusable_now(
            device,
            || "the event log".to_owned(),
            || event_log_buffer(device, capacity),
        )?;
        let watches = self.watches_mut();
        watches.ring = ring;
        watches.event_log = log;
        watches.event_capacity = capacity;
        self.controller_mut().set_detect_events(capacity > 0);
        self.bind_pages(device);
        Ok(())
    }

    /// The event log the clock (or fused) pass appends to: a [`GpuEventLogHead`] (the count of
    /// records appended, those past the capacity included, and the overflow) then
    /// [`Animator::event_capacity`] [`GpuEventRecord`]s; cleared at the start of each frame's
    /// passes. For a GPU consumer of events of your own (a pass after the animator's that spawns
    /// particles where feet land, say). Usage: STORAGE | COPY_SRC | COPY_DST.
    #[must_use]
    pub fn event_log_buffer(&self) -> &wgpu::Buffer {
        &self.watches().event_log
    }

    /// Reads back the events the last frame fired and the count of those that did not fit.
    /// For tests and tools; waits for the GPU ([`Animator::watch_events`] reads them without
    /// waiting).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn read_events(&self, device: &wgpu::Device, queue: &wgpu::Queue) -> Result<(Vec<GpuEventRecord>, u32)> {
        let watches = self.watches();
        if watches.event_capacity == 0 {
            return Ok((Vec::new(), 0));
        }
        let head: Vec<GpuEventLogHead> = super::read_buffer(device, queue, &watches.event_log, 0, 1)?;
        let head = head[0];
        let kept = head.count.min(watches.event_capacity);
        // The records follow the 16-byte head: read as 16-byte units, two per record.
        let units: Vec<GpuEventLogHead> =
            super::read_buffer(device, queue, &watches.event_log, 1, 2 * u64::from(kept))?;
        let records = bytemuck::cast_slice::<GpuEventLogHead, GpuEventRecord>(&units).to_vec();
        Ok((records, head.overflow))
    }

    /// The event log's capacity in records per frame (0: events not watched).
    #[must_use]
    pub fn event_capacity(&self) -> u32 {
        self.watches().event_capacity
    }

    /// Reads back the state machines of `characters` ([`crate::machine`]: the state playing, its
    /// normalized time, the transition running) with every frame, through the same ring and with
    /// the same latency as [`Animator::watch_sockets`] ([`FrameReadback::machines`]); 64 bytes
    /// each. What a machine emits (`state_entered` and the like) comes with the events
    /// ([`Animator::watch_events`], [`FrameReadback::machine_events`]). An empty list stops.
    /// Watch again after adding or removing characters.
    ///
    /// Errors (nothing changes): a character that does not exist, buffers the device refuses.
    pub fn watch_machines(&mut self, device: &wgpu::Device, characters: &[usize]) -> Result<()> {
        let record = size_of::<GpuMachineState>() as u64;
        let mut copies: Vec<RingCopy> = Vec::new();
        for (k, &index) in characters.iter().enumerate() {
            let (page, element) = self.controller().page_of(index).ok_or_else(|| Error::Instance {
                instance: index,
                what: "does not exist: its machine cannot be watched".into(),
            })?;
            let sections = MACHINES.instance_sections(self.controller().page_capacity(page));
            let states = sections.as_slice()[0];
            push_copy(&mut copies, page, states.at(element as u64), k as u64 * record, record);
        }
        let part = RingPart {
            resource: MACHINES,
            bytes: characters.len() as u64 * record,
            copies,
        };
        self.watches_mut().ring = make_ring(device, self.watches().ring_layout().with(part))?;
        Ok(())
    }

    /// The frames read back since the last call ([`Animator::watch_sockets`]), oldest first,
    /// each once.
    pub fn take_readbacks(&mut self) -> Vec<FrameReadback> {
        self.watches_mut().ring.as_mut().map(Ring::take).unwrap_or_default()
    }

    /// Waits for the GPU to finish the frames submitted and reads back those it copied (for
    /// [`Animator::take_readbacks`]): for a caller that needs frame `f − k`'s data at frame `f`
    /// whatever the GPU's pace, and accepts waiting when the GPU is more than `k` frames behind.
    /// The ring itself never waits.
    pub fn wait_readbacks(&mut self) {
        if let Some(ring) = &mut self.watches_mut().ring {
            ring.wait();
        }
    }

    /// Frames not read back because every slot of the ring was still in flight (the GPU more
    /// than [`READBACK_SLOTS`](super::READBACK_SLOTS) frames behind): the CPU skips them
    /// instead of waiting.
    #[must_use]
    pub fn readback_skipped(&self) -> u64 {
        self.watches().ring.as_ref().map_or(0, |r| r.skipped)
    }
}

/// The readback ring for `layout`; none when there is nothing to read.
fn make_ring(device: &wgpu::Device, layout: RingLayout) -> Result<Option<Ring<FrameReadback>>> {
    if layout.is_empty() {
        return Ok(None);
    }
    crate::gpu::refusable_now(
        device,
        || "the readback ring".to_owned(),
        || Some(Ring::new(device, layout, decode)),
    )
}

/// The readback of frame `frame` from a slot's data: each watch's part decoded (empty when not
/// watched).
fn decode(layout: &RingLayout, frame: u64, slot: &[u8]) -> FrameReadback {
    let log = layout.part(EVENTS, slot);
    let (events, events_overflow) = if log.is_empty() {
        (Vec::new(), 0)
    } else {
        let head: GpuEventLogHead = bytemuck::pod_read_unaligned(&log[..size_of::<GpuEventLogHead>()]);
        let records = &log[size_of::<GpuEventLogHead>()..];
        let kept = (head.count as usize).min(records.len() / size_of::<GpuEventRecord>());
        (read_all(&records[..kept * size_of::<GpuEventRecord>()]), head.overflow)
    };
    let (machine, clip): (Vec<GpuEventRecord>, Vec<GpuEventRecord>) = events
        .into_iter()
        .partition(|r: &GpuEventRecord| r.clip == MACHINE_EVENT_CLIP);
    FrameReadback {
        frame,
        sockets: read_all(layout.part(SOCKETS, slot)),
        outputs: read_all(layout.part(OUTPUTS, slot)),
        events: clip,
        events_overflow,
        machine_events: machine
            .iter()
            .map(|r| {
                let event = crate::cpu::machine::MachineEvent {
                    kind: r.event,
                    index: r.state,
                };
                (r.character, event)
            })
            .collect(),
        machines: read_all(layout.part(MACHINES, slot)),
    }
}

/// The values in `bytes` (whatever their alignment).
fn read_all<T: bytemuck::Pod>(bytes: &[u8]) -> Vec<T> {
    bytes
        .chunks_exact(size_of::<T>())
        .map(bytemuck::pod_read_unaligned)
        .collect()
}

/// Merges a copy of `bytes` from byte `src` of page `page` to byte `dst` of its part into
/// `copies` (into the last copy when it continues it on both sides).
fn push_copy(copies: &mut Vec<RingCopy>, page: usize, src: u64, dst: u64, bytes: u64) {
    match copies.last_mut() {
        Some(c) if c.page == page && c.src + c.bytes == src && c.dst + c.bytes == dst => {
            c.bytes += bytes;
        }
        _ => copies.push(RingCopy { page, src, dst, bytes }),
    }
}
