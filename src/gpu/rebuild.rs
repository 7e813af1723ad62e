//! Rebuilding an animator on a new device after the old one was lost: checkpoints of what a
//! frame carries over, and the frames since replayed.

use super::GpuLibrary;
use super::animator::Animator;
use super::page::check_pages;
use super::recovery::{Checkpoint, Recovery};
use crate::error::{Error, Result};
use crate::gpu::blocking::blocking;
use crate::shaders::Resource;
use std::sync::Arc;

// When the device is lost: recovery, and the rebuild on a new device.
impl Animator {
    /// Keeps what [`Animator::rebuild`] needs to rebuild this animator on a new device when
    /// `device` is lost, checkpointing every `interval` frames (`None` stops it). Off by default.
    ///
    /// A device can be lost at any time: a driver reset, a GPU removed, a laptop switching
    /// GPUs, the browser dropping the context. What a frame carries over from the one before is
    /// on that device: the instances' character state (clocks, and the world root motion moved)
    /// and the snapshot poses of interrupted cross-fades (the resources the binding table says
    /// survive by checkpoints, [`Resource::on_device_loss`]). With recovery on, every `interval`
    /// frames, [`Animator::encode`] also copies those of the instances in use and the snapshots
    /// still in use into a readback buffer, which [`Animator::prepare`] maps without waiting and
    /// takes in once the GPU is done (it polls `device` without blocking); and every frame since
    /// is logged: what it uploaded, its path, and how many times its passes were encoded.
    ///
    /// Costs: `192` bytes per instance in use (a 64-byte clock and a 128-byte output), `48`
    /// per joint of a snapshot in use (and its velocity with inertialization) and, with
    /// inertialization, `48` per joint in use (the pose shown) read back per checkpoint; a copy of the instances (320 bytes each) on the CPU; the uploads of up to about
    /// `interval` frames kept. A rebuild replays up to about `interval + 2` frames on the new
    /// device ([`Animator::recovery_frames`]).
    ///
    /// Call it before the first frame, or the first rebuild is possible once the first
    /// checkpoint is back (a few frames later). Submit each frame's encoder before the next
    /// `prepare` (as any frame loop does): the readback is mapped then.
    pub fn set_recovery(&mut self, device: &wgpu::Device, interval: Option<std::num::NonZeroU32>) {
        let frame = self.frame();
        self.recovery_state_mut()
            .set(interval.map(|n| Recovery::new(device, n.get(), frame)));
    }

    /// Frames a rebuild would replay now (those since the newest checkpoint back from the GPU),
    /// or `None` when it cannot rebuild: recovery is off, or no checkpoint is back yet.
    #[must_use]
    pub fn recovery_frames(&self) -> Option<usize> {
        let r = self.recovery_state().recovery()?;
        r.base.as_ref().map(|_| r.log.len())
    }

    /// A new animator on `device` (its device lost, or any other) in the state this one
    /// reached after its last prepared frame, the library uploaded again: [`Animator::rebuild_with_library_async`].
    ///
    /// Errors: as [`Animator::rebuild_with_library_async`], and a library the device refuses.
    pub async fn rebuild_async(&self, device: &wgpu::Device, queue: &wgpu::Queue) -> Result<Self> {
        let library = GpuLibrary::new_async(device, self.controller().library()).await?;
        self.rebuild_with_library_async(device, queue, library).await
    }

    blocking! {
        /// [`Animator::rebuild_async`], blocking until the device answers (native only).
        ///
        /// Errors: as [`Animator::rebuild_async`].
        pub fn rebuild(&self, device: &wgpu::Device, queue: &wgpu::Queue) -> Result<Self> = Self::rebuild_async;

        /// [`Animator::rebuild_with_library_async`], blocking until the device answers (native only).
        ///
        /// Errors: as [`Animator::rebuild_with_library_async`].
        pub fn rebuild_with_library(
            &self,
            device: &wgpu::Device,
            queue: &wgpu::Queue,
            gpu_library: Arc<GpuLibrary>,
        ) -> Result<Self> = Self::rebuild_with_library_async;
    }

    /// A new animator on `device`, playing `gpu_library` (this animator's library, uploaded to
    /// `device`), in the state this one reached after its last prepared frame: the same
    /// instances, pages and layer definitions, the edits made since that frame still to upload,
    /// the clocks and snapshots of its newest checkpoint, and every frame since replayed (the
    /// path each frame took, its uploads, as many encodes): its next frame continues from where
    /// this one was — on the same kind of device, bit for bit. Recovery stays on, with the same
    /// interval; previous palettes, if kept, start again (the first frame shows no motion); the
    /// watched sockets stay watched (the frames in flight on the old device are not read back).
    /// This animator is only read: its device may be lost.
    ///
    /// Errors ([`Error::Recovery`]): recovery is off ([`Animator::set_recovery`]) or no
    /// checkpoint is back yet, `gpu_library` plays another library, or `device` cannot hold this
    /// animator's pages; buffers or pipelines the device refuses.
    pub async fn rebuild_with_library_async(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        gpu_library: Arc<GpuLibrary>,
    ) -> Result<Self> {
        let fail = |what: &str| Error::Recovery { what: what.to_owned() };
        let recovery = self
            .recovery_state()
            .recovery()
            .ok_or_else(|| fail("recovery is off (Animator::set_recovery)"))?;
        let base = recovery
            .base
            .as_ref()
            .ok_or_else(|| fail("no checkpoint is back from the GPU yet"))?;
        if !Arc::ptr_eq(gpu_library.library_arc(), self.controller().library_arc())
            && super::LibraryHeap::new(gpu_library.library()) != super::LibraryHeap::new(self.controller().library())
        {
            return Err(fail("the library given is not this animator's"));
        }
        let layout: Vec<(u32, u32)> = (0..self.controller().page_count())
            .map(|k| (self.controller().page_capacity(k), self.controller().page_max_joints(k)))
            .collect();
        let options = self.controller().page_options();
        check_pages(&device.limits(), &layout, options).map_err(|what| fail(&what))?;
        let max_instances = self.controller().max_instances();
        let (ground, walk_threads) = self.asked();
        let mut next = Self::with_pages(
            device,
            gpu_library,
            max_instances,
            &layout,
            options,
            (ground, walk_threads, self.controller().layers()),
        )
        .await?;
        // The checkpoint: every layer definition (those of later frames too: none is read before
        // its frame), the instances of its frame, the clocks and snapshots after it.
        let defs = self.controller().layer_defs();
        queue.write_buffer(next.layer_def_buffer(), 0, bytemuck::cast_slice(defs));
        next.restore(queue, base);
        // Every frame since, as it ran.
        let last = recovery.log.len().saturating_sub(1);
        for (k, frame) in recovery.log.iter().enumerate() {
            next.write_upload(queue, &frame.upload);
            let encodes = if k == last {
                self.encodes_since_prepare()
            } else {
                frame.encodes
            };
            let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("wgpu-anim rebuild"),
            });
            let in_use = frame.upload.frames.iter().map(|(p, _)| p + 1).max().unwrap_or(0);
            for _ in 0..encodes {
                next.encode_passes(&mut encoder, None, frame.fused, in_use, None, |page| {
                    frame
                        .upload
                        .frames
                        .iter()
                        .find(|(p, _)| *p == page)
                        .map_or(0, |(_, f)| f.instance_count)
                });
            }
            queue.submit([encoder.finish()]);
        }
        next.continue_from(self);
        next.recovery_state_mut().set(Some(recovery.moved_to(device)));
        if next.watches_mut().take_over(device, self.watches())? {
            next.bind_pages(device);
        }
        if self.keeps_previous_palettes() {
            next.keep_previous_palettes(device, true)?;
        }
        Ok(next)
    }

    /// Writes checkpoint `base` to this animator's buffers: the instances from the CPU's copy
    /// ([`Survival::FromCpu`](crate::shaders::Survival::FromCpu)), then every part the
    /// checkpoint copied back, where it came from. Culling's marks come back as if no character
    /// had been drawn: the palettes a held character would keep were on the lost device, so the
    /// first frame evaluates everyone in view.
    fn restore(&self, queue: &wgpu::Queue, base: &Checkpoint) {
        for (page, instances) in base.instances.iter().enumerate().take(self.pages().len()) {
            queue.write_buffer(
                self.pages()[page].buffer(Resource::Instances),
                0,
                bytemuck::cast_slice(instances),
            );
        }
        for part in &base.parts {
            if let Some(page) = self.pages().get(part.page) {
                let mut bytes = std::borrow::Cow::Borrowed(&part.bytes[..]);
                if part.resource == Resource::CharacterState {
                    let outputs = crate::layout::outputs_offset(self.controller().page_capacity(part.page));
                    forget_drawn(bytes.to_mut(), part.offset, outputs);
                }
                queue.write_buffer(page.buffer(part.resource), part.offset, &bytes);
            }
        }
    }
}

/// Clears culling's [`MARK_DRAWN`](crate::layout::MARK_DRAWN) and
/// [`MARK_ENTERED`](crate::layout::MARK_ENTERED) (and the update rate that comes with drawn,
/// [`MARK_RATE_SHIFT`](crate::layout::MARK_RATE_SHIFT)) in every output's `evaluate` word of `bytes`, a
/// part of a page's character state from byte `offset`, whose outputs start at byte `outputs`.
fn forget_drawn(bytes: &mut [u8], offset: u64, outputs: u64) {
    use crate::layout::{GpuOutput, MARK_DRAWN, MARK_ENTERED, MARK_RATE_SHIFT};
    let stride = size_of::<GpuOutput>() as u64;
    let word = std::mem::offset_of!(GpuOutput, evaluate) as u64;
    let end = offset + bytes.len() as u64;
    let first = offset.saturating_sub(outputs) / stride;
    let mut at = outputs + first * stride + word;
    while at + 4 <= end {
        if at >= offset {
            let k = (at - offset) as usize;
            let mut v = u32::from_le_bytes([bytes[k], bytes[k + 1], bytes[k + 2], bytes[k + 3]]);
            v &= !(MARK_DRAWN | MARK_ENTERED | 3 << MARK_RATE_SHIFT);
            bytes[k..k + 4].copy_from_slice(&v.to_le_bytes());
        }
        at += stride;
    }
}

#[cfg(test)]
mod tests {
    use super::forget_drawn;
    use crate::layout::{GpuOutput, MARK_DRAWN, MARK_ENTERED, MARK_EVALUATE};

    /// Every output's marks in a part lose "drawn", whatever the part's bounds; nothing else
    /// changes.
    #[test]
    fn a_restored_part_forgets_what_was_drawn() {
        let outputs = 256u64;
        let marks = MARK_EVALUATE | MARK_DRAWN | MARK_ENTERED;
        let state: Vec<u8> = (0..4)
            .flat_map(|_| {
                let o = GpuOutput {
                    evaluate: marks,
                    world_seq: 7,
                    ..bytemuck::Zeroable::zeroed()
                };
                bytemuck::bytes_of(&o).to_vec()
            })
            .collect();
        let whole: Vec<u8> = [vec![9u8; outputs as usize], state].concat();
        for (from, to) in [
            (0, whole.len()),
            (200, whole.len()),
            (outputs as usize + 60, whole.len() - 10),
            (300, 330),
        ] {
            let mut part = whole[from..to].to_vec();
            forget_drawn(&mut part, from as u64, outputs);
            for (k, (a, b)) in part.iter().zip(&whole[from..to]).enumerate() {
                let at = (from + k) as u64;
                let word = std::mem::offset_of!(GpuOutput, evaluate) as u64;
                let in_marks = at >= outputs && (at - outputs) % 128 >= word && (at - outputs) % 128 < word + 4;
                if in_marks && (at - outputs) % 128 == word && to as u64 >= at + 4 {
                    assert_eq!(*a as u32, MARK_EVALUATE, "part {from}..{to}, byte {at}");
                } else if !in_marks {
                    assert_eq!(a, b, "part {from}..{to}, byte {at}");
                }
            }
        }
    }
}
