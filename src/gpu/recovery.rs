//! What an [`Animator`](super::Animator) keeps on the CPU to be rebuilt on a new device when its
//! device is lost ([`Animator::set_recovery`](super::Animator::set_recovery),
//! [`Animator::rebuild`](super::Animator::rebuild)).
//!
//! A frame computes everything from scratch except what it carries over from the frame before,
//! on the GPU, which the binding table names ([`Resource::on_device_loss`]): the resources that
//! are [`Survival::Checkpointed`] — the character state, each instance's clock (its times and
//! loop counts, its cross-fade's and its layers' clocks) and output (the world root motion
//! moved) — and the snapshot poses that interrupted cross-fades blend from
//! ([`Survival::SnapshotsCheckpointed`]), and with inertialized transitions the poses shown,
//! which the next frame may take velocities from ([`Survival::PosesCheckpointed`]). With
//! recovery on, the animator keeps:
//!
//! - a **checkpoint**: every `interval` frames, after that frame's passes, a copy of every
//!   section ([`Resource::instance_sections`]) of every checkpointed resource for the instances
//!   in use and of the snapshots a later frame may still blend from, read back without waiting
//!   (mapped when the device next polls; [`Animator::prepare`](super::Animator::prepare) polls
//!   it without blocking), kept as bytes tagged with where they go back;
//! - the instances as the GPU read them in the checkpoint's frame (a copy the logged uploads up
//!   to that frame are applied to);
//! - a **log** of every frame since: what it uploaded (its `dt` is in its frame uniforms), its
//!   path, and how many times its passes were encoded.
//!
//! A rebuild uploads the checkpoint to the new device and replays the log there, frame by frame,
//! with the same shaders, so that the rebuilt animator is where the lost one was after its last
//! frame: on the same kind of device, bit for bit.

use super::controller::{Controller, FrameUpload};
use super::page::Page;
use crate::layout::{GpuInstance, KEEP_POSE, source_kind};
use crate::shaders::{Resource, Survival};
use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

/// The state after one frame, from which the frames after it are replayed.
#[derive(Clone, Debug, Default)]
pub(super) struct Checkpoint {
    /// The frame (frames are numbered from 1; 0 is the state before the first).
    pub frame: u64,
    /// Per page: the instances the GPU read in `frame`.
    pub instances: Vec<Vec<GpuInstance>>,
    /// What the GPU held after `frame` of the resources that survive by checkpoints: the
    /// sections of the instances then in use, the snapshots a later frame may blend from.
    pub parts: Vec<SavedBytes>,
}

/// Bytes of a page's buffer, saved by a checkpoint and written back by a rebuild.
#[derive(Clone, Debug)]
pub(super) struct SavedBytes {
    /// The resource whose page buffer they come from.
    pub resource: Resource,
    pub page: usize,
    /// Where they start in the page's buffer.
    pub offset: u64,
    pub bytes: Vec<u8>,
}

/// One frame since the checkpoint.
#[derive(Clone, Debug)]
pub(super) struct LoggedFrame {
    pub frame: u64,
    pub upload: FrameUpload,
    pub fused: bool,
    /// Times its passes were encoded (known at the next prepare).
    pub encodes: u32,
}

/// Mapping state of a checkpoint's readback buffer.
const WAITING: u8 = 0;
const MAPPED: u8 = 1;
const FAILED: u8 = 2;

/// A checkpoint on its way back from the GPU.
#[derive(Debug)]
struct Pending {
    frame: u64,
    buffer: wgpu::Buffer,
    /// The copies into `buffer`: where each part comes from and where it is in `buffer`.
    parts: Vec<CheckpointCopy>,
    /// Instances of the checkpoint's frame, when there is no checkpoint yet to apply the log to.
    instances: Option<Vec<Vec<GpuInstance>>>,
    state: Arc<AtomicU8>,
    map_requested: bool,
}

/// One copy a frame records into its encoder for a checkpoint: `bytes` from `offset` of page
/// `page`'s buffer of `source` to `dst` of the readback buffer.
#[derive(Clone, Copy, Debug)]
pub(super) struct CheckpointCopy {
    pub page: usize,
    /// The page's buffer it reads: a resource that survives a lost device by checkpoints, or
    /// whose snapshots do ([`Resource::on_device_loss`]).
    pub source: Resource,
    pub offset: u64,
    pub dst: u64,
    pub bytes: u64,
}

/// The recovery state of an animator (see the module docs).
#[derive(Debug)]
pub(super) struct Recovery {
    /// Frames between checkpoints.
    pub interval: u32,
    /// Frames prepared since the animator was made.
    pub frame: u64,
    /// The newest checkpoint; `None` until the first one arrives when recovery began after the
    /// first frame.
    pub base: Option<Checkpoint>,
    /// Every frame after `base`.
    pub log: VecDeque<LoggedFrame>,
    pending: Option<Pending>,
    device: wgpu::Device,
}

impl Recovery {
    /// Recovery every `interval` frames, begun after `frame` frames (from an empty checkpoint
    /// when no frame has run yet).
    pub fn new(device: &wgpu::Device, interval: u32, frame: u64) -> Self {
        Self {
            interval: interval.max(1),
            frame,
            base: (frame == 0).then(Checkpoint::default),
            log: VecDeque::new(),
            pending: None,
            device: device.clone(),
        }
    }

    /// The same timeline on `device`, with no checkpoint in flight.
    pub fn moved_to(&self, device: &wgpu::Device) -> Self {
        Self {
            interval: self.interval,
            frame: self.frame,
            base: self.base.clone(),
            log: self.log.clone(),
            pending: None,
            device: device.clone(),
        }
    }

    /// Ends the previous frame (its passes were encoded `encodes` times) and logs frame
    /// `self.frame + 1`, which uploads `upload`. Returns the copies to record after this
    /// frame's passes when it is a checkpoint's.
    pub fn next_frame(
        &mut self,
        encodes: u32,
        upload: FrameUpload,
        fused: bool,
        controller: &Controller,
        page_joint_capacity: impl Fn(usize) -> u32,
    ) -> Vec<CheckpointCopy> {
        if let Some(last) = self.log.back_mut() {
            last.encodes = encodes;
        }
        self.receive(encodes);
        self.frame += 1;
        self.log.push_back(LoggedFrame {
            frame: self.frame,
            upload,
            fused,
            encodes: 0,
        });
        let due = self.base.is_none() || self.frame.is_multiple_of(u64::from(self.interval));
        if self.pending.is_some() || !due {
            return Vec::new();
        }
        self.plan(controller, page_joint_capacity)
    }

    /// Moves the checkpoint in flight on: asks for its mapping once its frame was encoded,
    /// polls, and takes it in once mapped.
    fn receive(&mut self, encodes_of_last: u32) {
        let Some(p) = &mut self.pending else { return };
        if !p.map_requested {
            if p.frame != self.frame || encodes_of_last == 0 {
                // Its frame's passes were never encoded: nothing was copied.
                self.pending = None;
                return;
            }
            let state = p.state.clone();
            // On a lost device the buffer is invalid: an error of this scope, not of the
            // uncaptured-error handler (which panics by default).
            let refused = super::scope_caught(&self.device, || {
                p.buffer.slice(..).map_async(wgpu::MapMode::Read, move |r| {
                    state.store(if r.is_ok() { MAPPED } else { FAILED }, Ordering::Release);
                });
            });
            p.map_requested = true;
            if refused {
                self.pending = None;
                return;
            }
        }
        // Fires the callback if the copy is done; never blocks.
        let _ = self.device.poll(wgpu::PollType::Poll);
        match p.state.load(Ordering::Acquire) {
            WAITING => {}
            MAPPED => {
                let p = self.pending.take().expect("checked above");
                self.take_in(&p);
                p.buffer.unmap();
            }
            _ => self.pending = None,
        }
    }

    /// Makes the checkpoint of `p` the base: the bytes it copied, and the instances of its frame (the logged uploads up to it applied to the previous base's).
    fn take_in(&mut self, p: &Pending) {
        let Ok(data) = p.buffer.slice(..).get_mapped_range() else {
            return;
        };
        let mut base = match (&p.instances, self.base.take()) {
            (Some(instances), _) => Checkpoint {
                instances: instances.clone(),
                ..Default::default()
            },
            (None, Some(b)) => b,
            // Unreachable: a checkpoint planned with a base carries no instances only then.
            (None, None) => return,
        };
        while self.log.front().is_some_and(|f| f.frame <= p.frame) {
            let f = self.log.pop_front().expect("checked");
            if p.instances.is_none() {
                apply_instances(&mut base.instances, &f.upload);
            }
        }
        base.frame = p.frame;
        base.parts = p
            .parts
            .iter()
            .map(|c| SavedBytes {
                resource: c.source,
                page: c.page,
                offset: c.offset,
                bytes: data[c.dst as usize..(c.dst + c.bytes) as usize].to_vec(),
            })
            .collect();
        self.base = Some(base);
    }

    /// Plans the checkpoint of the frame just logged: its readback buffer and the copies into
    /// it — in every page, each section of every [`Survival::Checkpointed`] resource for the
    /// instances in use, and of every [`Survival::SnapshotsCheckpointed`] one the snapshots of
    /// instances that keep their pose this frame or blend from a snapshot in a cross-fade still
    /// running.
    fn plan(&mut self, controller: &Controller, page_joint_capacity: impl Fn(usize) -> u32) -> Vec<CheckpointCopy> {
        let mut copies = Vec::new();
        let mut size = 0u64;
        let mut push = |source: Resource, page: usize, offset: u64, bytes: u64| {
            if bytes > 0 {
                copies.push(CheckpointCopy {
                    page,
                    source,
                    offset,
                    dst: size,
                    bytes,
                });
                size += bytes.next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT);
            }
        };
        for page in 0..controller.pages_in_use() {
            let in_use = controller.page_instances(page).len() as u64;
            for resource in surviving(Survival::Checkpointed) {
                for section in resource.instance_sections(controller.page_capacity(page)) {
                    push(resource, page, section.offset, section.bytes(in_use));
                }
            }
            // The instances' own morph weights (where the CPU writes them): the frames replayed
            // after the checkpoint apply their changes on top, as they did.
            let room = u64::from(controller.morph_room());
            push(
                Resource::MorphWeights,
                page,
                controller.own_morph_offset(page, 0),
                in_use * room * 4,
            );
            // With inertialization, the poses the frame showed, which the next frame's
            // inertialized transitions may take their velocities from.
            if controller.inertialization() {
                let joints = controller
                    .page_instances(page)
                    .iter()
                    .map(|i| i.joint_offset + i.joint_count)
                    .max();
                for resource in surviving(Survival::PosesCheckpointed) {
                    let pose = size_of::<crate::layout::LocalPose>() as u64;
                    push(resource, page, 0, u64::from(joints.unwrap_or(0)) * pose);
                }
            }
            // Runs of live snapshots, in joints (per-joint snapshots) and in instances.
            let joint_runs = snapshot_runs(controller, page, |_, inst| {
                (inst.joint_offset, inst.joint_offset + inst.joint_count)
            });
            let instance_runs = snapshot_runs(controller, page, |k, _| (k, k + 1));
            let capacity = controller.page_capacity(page);
            for resource in surviving(Survival::SnapshotsCheckpointed) {
                let (snapshots, runs) = match (
                    resource.snapshot_section(),
                    resource.instance_snapshot_section(capacity, controller.morph_room()),
                ) {
                    (Some(s), _) => (s, &joint_runs),
                    (None, Some(s)) => (s, &instance_runs),
                    (None, None) => {
                        debug_assert!(false, "{resource:?}: snapshots checkpointed, but no snapshot section");
                        continue;
                    }
                };
                // Inertialized transitions keep each joint's velocity beside its snapshot.
                let velocities = resource
                    .velocity_section(page_joint_capacity(page))
                    .filter(|_| controller.inertialization());
                for &(a, b) in runs {
                    for section in std::iter::once(snapshots).chain(velocities) {
                        push(
                            resource,
                            page,
                            section.at(u64::from(a)),
                            section.bytes(u64::from(b - a)),
                        );
                    }
                }
            }
        }
        let buffer = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("wgpu-anim checkpoint"),
            size: size.max(wgpu::COPY_BUFFER_ALIGNMENT),
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let instances = self.base.is_none().then(|| {
            (0..controller.page_count())
                .map(|page| controller.page_instances(page).to_vec())
                .collect()
        });
        self.pending = Some(Pending {
            frame: self.frame,
            buffer,
            parts: copies.clone(),
            instances,
            state: Arc::new(AtomicU8::new(WAITING)),
            map_requested: false,
        });
        copies
    }

    /// The readback buffer of the checkpoint this frame records, if any.
    pub fn checkpoint_buffer(&self) -> Option<&wgpu::Buffer> {
        self.pending
            .as_ref()
            .filter(|p| !p.map_requested && p.frame == self.frame)
            .map(|p| &p.buffer)
    }
}

/// What an animator keeps to rebuild on a new device: its recovery state while recovery is on
/// ([`Animator::set_recovery`](super::Animator::set_recovery)), and the copies this frame
/// records for a checkpoint. The animator owns one; only this module changes it.
#[derive(Debug, Default)]
pub(super) struct RecoveryState {
    /// What is kept to rebuild on a new device.
    recovery: Option<Recovery>,
    /// The copies this frame records for a checkpoint.
    checkpoint_copies: Vec<CheckpointCopy>,
}

impl RecoveryState {
    /// Starts (`Some`) or stops (`None`) recovery; this frame records no checkpoint.
    pub(super) fn set(&mut self, recovery: Option<Recovery>) {
        self.recovery = recovery;
        self.checkpoint_copies.clear();
    }

    /// The recovery state, while recovery is on.
    pub(super) fn recovery(&self) -> Option<&Recovery> {
        self.recovery.as_ref()
    }

    /// Logs the frame that uploads `upload` ([`Recovery::next_frame`]) and plans its checkpoint
    /// copies, while recovery is on; otherwise gives `upload` back (its room is reused).
    pub(super) fn next_frame(
        &mut self,
        encodes: u32,
        upload: FrameUpload,
        fused: bool,
        controller: &Controller,
    ) -> Option<FrameUpload> {
        match &mut self.recovery {
            Some(recovery) => {
                let pages = controller;
                self.checkpoint_copies =
                    recovery.next_frame(encodes, upload, fused, pages, |page| pages.page_max_joints(page));
                None
            }
            None => Some(upload),
        }
    }

    /// Records this frame's checkpoint copies from `pages`, if it takes a checkpoint.
    pub(super) fn copy_checkpoint(&self, encoder: &mut wgpu::CommandEncoder, pages: &[Page]) {
        if let Some(buffer) = self.recovery.as_ref().and_then(Recovery::checkpoint_buffer) {
            for c in &self.checkpoint_copies {
                let page = &pages[c.page];
                encoder.copy_buffer_to_buffer(page.buffer(c.source), c.offset, buffer, c.dst, c.bytes);
            }
        }
    }
}

/// Applies the instance runs of `upload` to per-page instance copies.
pub(super) fn apply_instances(pages: &mut Vec<Vec<GpuInstance>>, upload: &FrameUpload) {
    for (page, first, run) in &upload.instances {
        if pages.len() <= *page {
            pages.resize(page + 1, Vec::new());
        }
        let p = &mut pages[*page];
        if p.len() < first + run.len() {
            p.resize(first + run.len(), bytemuck::Zeroable::zeroed());
        }
        p[*first..first + run.len()].copy_from_slice(run);
    }
}

/// The resources of the binding table that survive a lost device as `survival` says.
fn surviving(survival: Survival) -> impl Iterator<Item = Resource> {
    Resource::ALL
        .into_iter()
        .filter(move |r| r.on_device_loss() == survival)
}

/// What of page `page` holds snapshots a later frame may read — `unit(k, instance)` of its
/// instance `k`: its joints, or the instance itself — in runs `(first, end)` of consecutive
/// instances: those that keep their pose this frame, those whose transition still running
/// reads it (a cross-fade from a snapshot, an inertialized transition's offset), and those that
/// follow a state machine.
fn snapshot_runs(
    controller: &Controller,
    page: usize,
    unit: impl Fn(u32, &crate::layout::GpuInstance) -> (u32, u32),
) -> Vec<(u32, u32)> {
    let first = controller.page_range(page).start;
    let mut runs: Vec<(u32, u32)> = Vec::new();
    // Whether the instance before was live: a run continues only through live instances.
    let mut open = false;
    for (k, inst) in controller.page_instances(page).iter().enumerate() {
        let kind = inst.source_kind();
        // A state machine's transitions are decided on the GPU: any may hold a snapshot.
        let live = inst.flags & (KEEP_POSE | crate::layout::MACHINE) != 0
            || ((kind == source_kind::SNAPSHOT || kind == source_kind::OFFSET)
                && controller.transition_running(first + k));
        let span = unit(k as u32, inst);
        match runs.last_mut() {
            Some(run) if live && open && run.1 == span.0 => run.1 = span.1,
            _ if live => runs.push(span),
            _ => {}
        }
        open = live;
    }
    runs
}
