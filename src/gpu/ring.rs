//! A ring of readback buffers the frames copy into and the CPU maps without waiting
//! ([`crate::Animator::watch_sockets`], [`crate::Animator::watch_events`],
//! [`crate::Animator::take_readbacks`]).
//!
//! Frame `f`'s passes end with copies into a free slot of the ring; the next prepare asks for the
//! slot to be mapped and polls the device without blocking; once the GPU has finished the frame,
//! a later prepare finds the slot mapped, reads it, frees it and hands the data on tagged with
//! `f`. A frame that finds no free slot (the GPU more than the ring's length behind) is not
//! copied and is counted as skipped: the CPU never waits.

use crate::layout::{GpuEventLogHead, GpuEventRecord, GpuOutput};
use crate::math::Affine;
use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

/// Slots in the ring: a frame's data are copied at its end, mapped from the next prepare on and
/// read at the first prepare after the GPU has finished it.
pub const READBACK_SLOTS: usize = 4;

/// What frames computed, read back without waiting.
#[derive(Clone, Debug, PartialEq)]
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
    /// The events the frame fired ([`crate::Animator::watch_events`]), in the order the GPU
    /// appended them (any order within a frame).
    pub events: Vec<GpuEventRecord>,
    /// Events the frame fired that did not fit the log (counted, not kept).
    pub events_overflow: u32,
}

const FREE: u8 = 0;
/// Assigned to a frame, copied into when it is encoded.
const ASSIGNED: u8 = 1;
const MAPPING: u8 = 2;
const MAPPED: u8 = 3;
const FAILED: u8 = 4;

#[derive(Debug)]
struct Slot {
    buffer: wgpu::Buffer,
    state: Arc<AtomicU8>,
    frame: u64,
}

/// One copy from a page's buffer into a slot: `count` elements (socket matrices of the palette
/// buffer, or outputs of the character state's outputs section) from element `element` to element `dst` of the slot's
/// part for them.
#[derive(Clone, Copy, Debug)]
pub(super) struct RingCopy {
    pub page: usize,
    pub element: u64,
    pub dst: u64,
    pub count: u64,
}

/// What a frame copies into its slot: the watched sockets (runs of consecutive slots merged),
/// then the watched roots, then the event log.
#[derive(Clone, Debug, Default)]
pub(super) struct RingLayout {
    /// Copies from the palette buffers.
    pub sockets: Vec<RingCopy>,
    /// Socket matrices per frame.
    pub socket_count: usize,
    /// Copies from the outputs sections of the character states.
    pub roots: Vec<RingCopy>,
    /// Roots per frame.
    pub root_count: usize,
    /// Bytes of the event log (0: events not watched).
    pub event_bytes: u64,
}

impl RingLayout {
    /// Where the roots start in a slot.
    pub fn roots_at(&self) -> u64 {
        (self.socket_count * size_of::<Affine>()) as u64
    }

    /// Where the event log starts in a slot.
    pub fn events_at(&self) -> u64 {
        self.roots_at() + (self.root_count * size_of::<GpuOutput>()) as u64
    }

    /// Whether there is anything to read back.
    pub fn is_empty(&self) -> bool {
        self.socket_count == 0 && self.root_count == 0 && self.event_bytes == 0
    }
}

/// The readback ring of one animator.
#[derive(Debug)]
pub(super) struct Ring {
    device: wgpu::Device,
    slots: Vec<Slot>,
    /// What every frame copies.
    pub layout: RingLayout,
    /// The slot this frame copies into.
    current: Option<usize>,
    ready: VecDeque<FrameReadback>,
    /// Frames not copied because no slot was free.
    pub skipped: u64,
}

impl Ring {
    /// A ring for frames laid out as `layout`.
    pub fn new(device: &wgpu::Device, layout: RingLayout) -> Self {
        let size = (layout.events_at() + layout.event_bytes).max(16);
        let slots = (0..READBACK_SLOTS)
            .map(|k| Slot {
                buffer: device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some(&format!("wgpu-anim readback {k}")),
                    size,
                    usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                }),
                state: Arc::new(AtomicU8::new(FREE)),
                frame: 0,
            })
            .collect();
        Self {
            device: device.clone(),
            slots,
            layout,
            current: None,
            ready: VecDeque::new(),
            skipped: 0,
        }
    }

    /// The same watch on `device`, nothing in flight (the frames in flight on the old device are
    /// lost with it).
    pub fn moved_to(&self, device: &wgpu::Device) -> Self {
        let mut ring = Self::new(device, self.layout.clone());
        ring.skipped = self.skipped;
        ring
    }

    /// Starts frame `frame`: the previous frame's slot is mapped if its passes were encoded
    /// (`encoded`), the device polled without blocking, what is mapped read in frame order, and
    /// a free slot assigned to this frame (or the frame counted as skipped).
    pub fn begin_frame(&mut self, frame: u64, encoded: bool) {
        if let Some(k) = self.current.take() {
            let slot = &mut self.slots[k];
            if encoded {
                let state = slot.state.clone();
                state.store(MAPPING, Ordering::Release);
                // On a lost device the buffer is invalid: an error of this scope, not a panic of
                // the uncaptured-error handler.
                let refused = super::scope_caught(&self.device, || {
                    slot.buffer.slice(..).map_async(wgpu::MapMode::Read, move |r| {
                        state.store(if r.is_ok() { MAPPED } else { FAILED }, Ordering::Release);
                    });
                });
                if refused {
                    slot.state.store(FREE, Ordering::Release);
                }
            } else {
                slot.state.store(FREE, Ordering::Release);
            }
        }
        let _ = self.device.poll(wgpu::PollType::Poll);
        self.collect();
        match self.slots.iter().position(|s| s.state.load(Ordering::Acquire) == FREE) {
            Some(k) => {
                self.slots[k].state.store(ASSIGNED, Ordering::Release);
                self.slots[k].frame = frame;
                self.current = Some(k);
            }
            None => self.skipped += 1,
        }
    }

    /// Reads every mapped slot, oldest frame first, and frees it; a failed mapping frees its slot.
    fn collect(&mut self) {
        let mut mapped: Vec<usize> = (0..self.slots.len())
            .filter(|&k| matches!(self.slots[k].state.load(Ordering::Acquire), MAPPED | FAILED))
            .collect();
        mapped.sort_by_key(|&k| self.slots[k].frame);
        for k in mapped {
            let slot = &self.slots[k];
            if slot.state.load(Ordering::Acquire) == MAPPED {
                let l = &self.layout;
                let (roots_at, events_at) = (l.roots_at() as usize, l.events_at() as usize);
                if let Ok(data) = slot.buffer.slice(..).get_mapped_range() {
                    let sockets = data[..roots_at]
                        .chunks_exact(size_of::<Affine>())
                        .map(bytemuck::pod_read_unaligned)
                        .collect();
                    let roots = data[roots_at..events_at]
                        .chunks_exact(size_of::<GpuOutput>())
                        .map(bytemuck::pod_read_unaligned)
                        .collect();
                    let (events, events_overflow) = if l.event_bytes > 0 {
                        let log = &data[events_at..events_at + l.event_bytes as usize];
                        let head: GpuEventLogHead = bytemuck::pod_read_unaligned(&log[..size_of::<GpuEventLogHead>()]);
                        let records = &log[size_of::<GpuEventLogHead>()..];
                        let kept = (head.count as usize).min(records.len() / size_of::<GpuEventRecord>());
                        let events = records[..kept * size_of::<GpuEventRecord>()]
                            .chunks_exact(size_of::<GpuEventRecord>())
                            .map(bytemuck::pod_read_unaligned)
                            .collect();
                        (events, head.overflow)
                    } else {
                        (Vec::new(), 0)
                    };
                    self.ready.push_back(FrameReadback {
                        frame: slot.frame,
                        sockets,
                        outputs: roots,
                        events,
                        events_overflow,
                    });
                }
                slot.buffer.unmap();
            }
            slot.state.store(FREE, Ordering::Release);
        }
    }

    /// Waits for the GPU to finish the frames submitted and reads back those mapped.
    pub fn wait(&mut self) {
        let _ = self.device.poll(wgpu::PollType::wait_indefinitely());
        self.collect();
    }

    /// The buffer this frame copies into, if it has one.
    pub fn current_buffer(&self) -> Option<&wgpu::Buffer> {
        self.current.map(|k| &self.slots[k].buffer)
    }

    /// The frames read back so far and not yet taken, oldest first.
    pub fn take(&mut self) -> Vec<FrameReadback> {
        self.ready.drain(..).collect()
    }
}
