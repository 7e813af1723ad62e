//! What an animator reads back every frame without waiting — socket matrices, characters'
//! outputs, clip events — through its ring of readback buffers.

use super::animator::{Animator, event_log_buffer};
use super::ring::{FrameReadback, Ring, RingCopy, RingLayout};
use crate::error::{Error, Result};
use crate::layout::{GpuEventLogHead, GpuEventRecord, MAX_SOCKETS};

impl Animator {
    /// Where instance `index`'s socket `socket` (of its skeleton's [`crate::Skeleton::sockets`])
    /// is written each frame: `(page, element)`, the element an `Affine` (3×4 rows, 48 bytes) of
    /// that page's palette buffer. The matrix is `world · model[joint] · offset`, the socket in
    /// world space: a prop drawn with it follows the joint with no CPU work. A page's socket
    /// matrices start after its joint capacity, instance `k` of the page at `k · MAX_SOCKETS`.
    /// `None` for an instance or socket that does not exist.
    #[must_use]
    pub fn socket_slot(&self, index: usize, socket: usize) -> Option<(usize, u64)> {
        let inst = self.controller.instance(index)?;
        let sockets = self.controller.library().gpu_skeletons()[inst.skeleton as usize].socket_count;
        if socket >= sockets as usize {
            return None;
        }
        let (page, k) = self.controller.page_of(index)?;
        let first = u64::from(self.controller.page_max_joints(page));
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
        let mut copies: Vec<RingCopy> = Vec::new();
        for (k, &(index, socket)) in sockets.iter().enumerate() {
            let (page, element) = self.socket_slot(index, socket).ok_or_else(|| Error::Instance {
                instance: index,
                what: format!("has no socket {socket} to watch (or does not exist)"),
            })?;
            push_copy(&mut copies, page, element, k);
        }
        let layout = RingLayout {
            sockets: copies,
            socket_count: sockets.len(),
            ..self.ring.as_ref().map(|r| r.layout.clone()).unwrap_or_default()
        };
        self.ring = make_ring(device, layout)?;
        Ok(())
    }

    /// Reads back what the clock stage gives back for `characters` ([`GpuOutput`](crate::layout::GpuOutput)) with every
    /// frame — root motion (world transform, the frame's displacement) and float curve values —
    /// through the same ring and with the same latency as [`Animator::watch_sockets`]
    /// ([`FrameReadback::outputs`](super::FrameReadback)). The GPU writes a character's root
    /// motion only while it has root motion on ([`Controller::set_root_motion`](super::Controller::set_root_motion)), and curves
    /// when the library has any. An empty list stops. Watch again after adding or removing
    /// characters.
    ///
    /// Errors (nothing changes): a character that does not exist, buffers the device refuses.
    pub fn watch_outputs(&mut self, device: &wgpu::Device, characters: &[usize]) -> Result<()> {
        let mut copies: Vec<RingCopy> = Vec::new();
        for (k, &index) in characters.iter().enumerate() {
            let (page, element) = self.controller.page_of(index).ok_or_else(|| Error::Instance {
                instance: index,
                what: "does not exist: its root cannot be watched".into(),
            })?;
            push_copy(&mut copies, page, element as u64, k);
        }
        let layout = RingLayout {
            roots: copies,
            root_count: characters.len(),
            ..self.ring.as_ref().map(|r| r.layout.clone()).unwrap_or_default()
        };
        self.ring = make_ring(device, layout)?;
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
        let layout = RingLayout {
            event_bytes: bytes,
            ..self.ring.as_ref().map(|r| r.layout.clone()).unwrap_or_default()
        };
        let ring = make_ring(device, layout)?;
        let log = super::refusable_now(
            device,
            || "the event log".to_owned(),
            || event_log_buffer(device, capacity),
        )?;
        self.ring = ring;
        self.event_log = log;
        self.event_capacity = capacity;
        self.controller.set_detect_events(capacity > 0);
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
        &self.event_log
    }

    /// Reads back the events the last frame fired and the count of those that did not fit.
    /// For tests and tools; waits for the GPU ([`Animator::watch_events`] reads them without
    /// waiting).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn read_events(&self, device: &wgpu::Device, queue: &wgpu::Queue) -> Result<(Vec<GpuEventRecord>, u32)> {
        if self.event_capacity == 0 {
            return Ok((Vec::new(), 0));
        }
        let head: Vec<GpuEventLogHead> = super::read_buffer(device, queue, &self.event_log, 0, 1)?;
        let head = head[0];
        let kept = head.count.min(self.event_capacity);
        // The records follow the 16-byte head: read as 16-byte units, two per record.
        let units: Vec<GpuEventLogHead> = super::read_buffer(device, queue, &self.event_log, 1, 2 * u64::from(kept))?;
        let records = bytemuck::cast_slice::<GpuEventLogHead, GpuEventRecord>(&units).to_vec();
        Ok((records, head.overflow))
    }

    /// The event log's capacity in records per frame (0: events not watched).
    #[must_use]
    pub fn event_capacity(&self) -> u32 {
        self.event_capacity
    }

    /// The frames read back since the last call ([`Animator::watch_sockets`]), oldest first,
    /// each once.
    pub fn take_readbacks(&mut self) -> Vec<FrameReadback> {
        self.ring.as_mut().map(Ring::take).unwrap_or_default()
    }

    /// Waits for the GPU to finish the frames submitted and reads back those it copied (for
    /// [`Animator::take_readbacks`]): for a caller that needs frame `f − k`'s data at frame `f`
    /// whatever the GPU's pace, and accepts waiting when the GPU is more than `k` frames behind.
    /// The ring itself never waits.
    pub fn wait_readbacks(&mut self) {
        if let Some(ring) = &mut self.ring {
            ring.wait();
        }
    }

    /// Frames not read back because every slot of the ring was still in flight (the GPU more
    /// than [`READBACK_SLOTS`](super::READBACK_SLOTS) frames behind): the CPU skips them
    /// instead of waiting.
    #[must_use]
    pub fn readback_skipped(&self) -> u64 {
        self.ring.as_ref().map_or(0, |r| r.skipped)
    }
}

/// The readback ring for `layout`; none when there is nothing to read.
fn make_ring(device: &wgpu::Device, layout: RingLayout) -> Result<Option<Ring>> {
    if layout.is_empty() {
        return Ok(None);
    }
    super::refusable_now(
        device,
        || "the readback ring".to_owned(),
        || Some(Ring::new(device, layout)),
    )
}

/// Merges element `element` of page `page` into `copies` as element `k` of its part of a slot.
fn push_copy(copies: &mut Vec<RingCopy>, page: usize, element: u64, k: usize) {
    match copies.last_mut() {
        Some(c) if c.page == page && c.element + c.count == element && c.dst + c.count == k as u64 => {
            c.count += 1;
        }
        _ => copies.push(RingCopy {
            page,
            element,
            dst: k as u64,
            count: 1,
        }),
    }
}
