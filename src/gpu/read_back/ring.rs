//! A ring of readback buffers the frames copy into and the CPU maps without waiting
//! ([`crate::Animator::watch_sockets`], [`crate::Animator::watch_events`],
//! [`crate::Animator::take_readbacks`]).
//!
//! Frame `f`'s passes end with copies into a free slot of the ring; the next prepare asks for the
//! slot to be mapped and polls the device without blocking; once the GPU has finished the frame,
//! a later prepare finds the slot mapped, reads it, frees it and hands the data on tagged with
//! `f`. A frame that finds no free slot (the GPU more than the ring's length behind) is not
//! copied and is counted as skipped: the CPU never waits.
//!
//! A slot holds the parts of a [`RingLayout`], end to end: each part the bytes of one resource
//! of the binding table that may be read back ([`Resource::read_back`]), copied from wherever
//! its copies say. Which parts there are and what their bytes mean is the watches' business
//! (`watch.rs`), which give the ring the function that decodes a slot.

use crate::shaders::Resource;
use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

/// Slots in the ring: a frame's data are copied at its end, mapped from the next prepare on and
/// read at the first prepare after the GPU has finished it.
pub const READBACK_SLOTS: usize = 4;

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

/// One copy into a part of a slot: `bytes` from byte `src` of page `page`'s buffer of the
/// part's resource (the animator's own buffer, whatever `page`, for a resource that is not per
/// page) to byte `dst` of the part.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::gpu) struct RingCopy {
    pub page: usize,
    pub src: u64,
    pub dst: u64,
    pub bytes: u64,
}

/// A part of a slot: what one watch reads back every frame from one resource.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(in crate::gpu) struct RingPart {
    /// The resource its copies read, one that may be read back ([`Resource::read_back`]).
    pub resource: Resource,
    /// Its bytes in a slot (a multiple of 4, as copies need).
    pub bytes: u64,
    /// The copies that fill it.
    pub copies: Vec<RingCopy>,
}

impl RingPart {
    /// A part of `bytes` filled by one copy from the start of page 0's buffer of `resource` (or
    /// the animator's, for a resource shared by every page, as the event log).
    pub fn whole(resource: Resource, bytes: u64) -> Self {
        RingPart {
            resource,
            bytes,
            copies: vec![RingCopy {
                page: 0,
                src: 0,
                dst: 0,
                bytes,
            }],
        }
    }
}

/// What a frame copies into its slot: its parts end to end, at most one per resource.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(in crate::gpu) struct RingLayout {
    parts: Vec<RingPart>,
}

impl RingLayout {
    /// This layout with `part` in place of the part of its resource (removed when `part` has no
    /// bytes); the other parts stay as they are.
    pub fn with(mut self, part: RingPart) -> Self {
        debug_assert!(
            part.resource.read_back(),
            "{:?} is not read back (Resource::read_back)",
            part.resource
        );
        debug_assert!(part.bytes.is_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT));
        match self.parts.iter().position(|p| p.resource == part.resource) {
            Some(k) if part.bytes == 0 => {
                self.parts.remove(k);
            }
            Some(k) => self.parts[k] = part,
            None if part.bytes == 0 => {}
            None => self.parts.push(part),
        }
        self
    }

    /// The parts, each with where it starts in a slot.
    pub fn placed(&self) -> impl Iterator<Item = (u64, &RingPart)> {
        self.parts.iter().scan(0u64, |at, part| {
            let start = *at;
            *at += part.bytes;
            Some((start, part))
        })
    }

    /// Bytes of a slot.
    pub fn size(&self) -> u64 {
        self.parts.iter().map(|p| p.bytes).sum()
    }

    /// The bytes of `resource`'s part in `slot`, a slot's data (empty when it has no part).
    pub fn part<'a>(&self, resource: Resource, slot: &'a [u8]) -> &'a [u8] {
        self.placed()
            .find(|(_, p)| p.resource == resource)
            .map_or(&[], |(at, p)| &slot[at as usize..(at + p.bytes) as usize])
    }

    /// Whether there is anything to read back.
    pub fn is_empty(&self) -> bool {
        self.parts.is_empty()
    }
}

/// What decodes a slot's data: the layout it was copied by, its frame, its bytes.
pub(in crate::gpu) type Decode<T> = fn(&RingLayout, u64, &[u8]) -> T;

/// The readback ring of one animator, handing on what it reads as `T`.
#[derive(Debug)]
pub(in crate::gpu) struct Ring<T> {
    device: wgpu::Device,
    slots: Vec<Slot>,
    /// What every frame copies.
    pub layout: RingLayout,
    /// Makes a `T` of a slot read.
    decode: Decode<T>,
    /// The slot this frame copies into.
    current: Option<usize>,
    ready: VecDeque<T>,
    /// Frames not copied because no slot was free.
    pub skipped: u64,
}

impl<T> Ring<T> {
    /// A ring for frames laid out as `layout`, its slots read by `decode`.
    pub fn new(device: &wgpu::Device, layout: RingLayout, decode: Decode<T>) -> Self {
        let size = layout.size().max(16);
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
            decode,
            current: None,
            ready: VecDeque::new(),
            skipped: 0,
        }
    }

    /// The same watch on `device`, nothing in flight (the frames in flight on the old device are
    /// lost with it).
    pub fn moved_to(&self, device: &wgpu::Device) -> Self {
        let mut ring = Self::new(device, self.layout.clone(), self.decode);
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
                let refused = crate::gpu::scope_caught(&self.device, || {
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
                if let Ok(data) = slot.buffer.slice(..).get_mapped_range() {
                    self.ready.push_back((self.decode)(&self.layout, slot.frame, &data));
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
    pub fn take(&mut self) -> Vec<T> {
        self.ready.drain(..).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::{RingLayout, RingPart};
    use crate::shaders::Resource;

    fn part(resource: Resource, bytes: u64) -> RingPart {
        RingPart::whole(resource, bytes)
    }

    /// Parts lie end to end, one per resource; a part replaced keeps its place, one with no
    /// bytes is removed.
    #[test]
    fn parts_lie_end_to_end_one_per_resource() {
        let layout = RingLayout::default()
            .with(part(Resource::Palettes, 96))
            .with(part(Resource::CharacterState, 128))
            .with(part(Resource::Events, 48));
        let at: Vec<(u64, Resource)> = layout.placed().map(|(at, p)| (at, p.resource)).collect();
        assert_eq!(
            at,
            [
                (0, Resource::Palettes),
                (96, Resource::CharacterState),
                (224, Resource::Events)
            ]
        );
        assert_eq!(layout.size(), 272);
        let slot: Vec<u8> = (0..272).map(|k| k as u8).collect();
        assert_eq!(layout.part(Resource::CharacterState, &slot), &slot[96..224]);
        let layout = layout
            .with(part(Resource::Palettes, 48))
            .with(part(Resource::CharacterState, 0));
        assert_eq!(layout.size(), 96);
        assert!(layout.part(Resource::CharacterState, &slot).is_empty());
        assert!(!layout.is_empty());
        assert!(
            layout
                .with(part(Resource::Palettes, 0))
                .with(part(Resource::Events, 0))
                .is_empty()
        );
    }

    /// Every resource read back is one the table says may be; another is refused.
    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "is not read back")]
    fn a_part_of_a_resource_not_read_back_is_refused() {
        let _ = RingLayout::default().with(part(Resource::LocalPoses, 48));
    }
}
