//! The frame's upload: what changed since the last frame, coalesced into runs per page.

use super::{Controller, TransitionTrack};
use crate::layout::{
    FRAME_CULL, FRAME_CULL_VIEW, FRAME_CURVES, FRAME_DUAL_QUATERNION, FRAME_EVENTS, FRAME_LOD_INTERPOLATE, FRAME_VAT,
    GpuClock, GpuFrame, GpuInstance, GpuLayerDef, KEEP_VELOCITY, VELOCITY_FROM_LAST_POSE,
};

/// What one frame writes to the GPU, by page: nothing here needs a device. `#[non_exhaustive]`:
/// it gains a field with each kind of data a frame uploads; read its fields (an empty one is
/// [`FrameUpload::default`]).
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct FrameUpload {
    /// The frame uniform of each page in use (`(page, frame)`).
    pub frames: Vec<(usize, GpuFrame)>,
    /// Layer definitions added since the last frame: `(first index, definitions)`.
    pub layer_defs: Option<(usize, Vec<GpuLayerDef>)>,
    /// Changed instances: `(page, first index in the page, instances)`, one run of consecutive
    /// instances each.
    pub instances: Vec<(usize, usize, Vec<GpuInstance>)>,
    /// Clocks to overwrite (seeks, new instances): `(page, first index in the page, clocks)`.
    pub clocks: Vec<(usize, usize, Vec<GpuClock>)>,
    /// Writes into sections of the pages' buffers ([`crate::shaders::Resource::sections`]), one
    /// run each: the changed morph weights of consecutive instances
    /// ([`crate::gpu::Controller::set_morph_weights`]), and whatever else the controller keeps
    /// in a section.
    pub sections: Vec<SectionWrite>,
}

/// One write into a section of a page's buffer ([`FrameUpload::sections`]): the words of a run
/// of instances, where the section's data for them lies in the buffer of its home
/// ([`crate::shaders::Resource::home`]). `#[non_exhaustive]`: read its fields.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct SectionWrite {
    /// The page.
    pub page: usize,
    /// The section written.
    pub resource: crate::shaders::Resource,
    /// The first byte written in the page's buffer of the section's home.
    pub offset: u64,
    /// What is written, in 4-byte words.
    pub words: Vec<u32>,
}

impl FrameUpload {
    /// Empties it, keeping its room ([`Controller::begin_frame_into`]).
    pub fn clear(&mut self) {
        self.frames.clear();
        self.layer_defs = None;
        self.instances.clear();
        self.clocks.clear();
        self.sections.clear();
    }

    /// Bytes the upload writes.
    #[must_use]
    pub fn bytes(&self) -> u64 {
        let frames = self.frames.len() * size_of::<GpuFrame>();
        let defs = self
            .layer_defs
            .as_ref()
            .map_or(0, |(_, d)| d.len() * size_of::<GpuLayerDef>());
        let instances: usize = self
            .instances
            .iter()
            .map(|(_, _, v)| v.len() * size_of::<GpuInstance>())
            .sum();
        let clocks: usize = self
            .clocks
            .iter()
            .map(|(_, _, v)| v.len() * size_of::<GpuClock>())
            .sum();
        let sections: usize = self.sections.iter().map(|w| w.words.len() * 4).sum();
        (frames + defs + instances + clocks + sections) as u64
    }
}

impl Controller {
    /// Whether the frames from the next on detect clip events (the animator's event log).
    pub(crate) fn set_detect_events(&mut self, on: bool) {
        self.detect_events = on;
    }

    /// Whether frames detect clip events.
    #[must_use]
    pub fn detects_events(&self) -> bool {
        self.detect_events
    }

    /// Starts a frame of `dt` seconds (a non-finite `dt` counts as 0): held-back cross-fades
    /// whose pose a frame has kept start now, and everything changed since the last frame is
    /// returned, coalesced into runs of consecutive instances per page, for the GPU.
    pub fn begin_frame(&mut self, dt: f32) -> FrameUpload {
        let mut upload = FrameUpload::default();
        self.begin_frame_into(dt, &mut upload);
        upload
    }

    /// As [`Controller::begin_frame`], into `upload` (emptied first), reusing its room: a frame
    /// that changes nothing then allocates nothing.
    pub fn begin_frame_into(&mut self, dt: f32, upload: &mut FrameUpload) {
        self.uploaded = self.instances.len();
        upload.clear();
        let dt = if dt.is_finite() { dt } else { 0.0 };
        self.settle_skinning();
        // Held-back transitions whose pose a frame has kept start now; the others keep it in this
        // frame.
        for index in std::mem::take(&mut self.held_list) {
            let Some(h) = &mut self.held[index] else { continue };
            if h.kept {
                self.instances[index] = h.inst;
                self.transitions[index] = TransitionTrack {
                    started_at: self.seconds,
                    duration: h.duration,
                };
                self.held[index] = None;
                self.mark_dirty(index);
            } else {
                h.kept = true;
                self.held_list.push(index);
                // This frame keeps the pose (and velocity) shown: the velocity from the pose the
                // frame before showed, where the buffer holds it and it continues this state.
                let from_last = self.last_poses_kept && !self.culling && self.frames >= self.shown_since[index];
                let flags = &mut self.instances[index].flags;
                *flags &= !VELOCITY_FROM_LAST_POSE;
                if from_last && *flags & KEEP_VELOCITY != 0 {
                    *flags |= VELOCITY_FROM_LAST_POSE;
                }
                self.mark_dirty(index);
            }
        }
        self.seconds += f64::from(dt);
        self.frames += 1;
        // The view's planes and LOD uniform, once a frame for every page.
        let (cull_planes, lod) = (self.cull_planes().unwrap_or([glam::Vec4::W; 6]), self.lod_uniform());
        for (k, p) in self.pages.iter().enumerate().filter(|(_, p)| p.len > 0) {
            let frame = GpuFrame {
                dt,
                instance_count: p.len as u32,
                snapshot_offset: p.max_joints,
                first_instance: p.first as u32,
                frame: self.frames as u32,
                flags: if self.detect_events { FRAME_EVENTS } else { 0 }
                    | if self.library.curve_names().is_empty() {
                        0
                    } else {
                        FRAME_CURVES
                    }
                    | if self.dual_quaternion { FRAME_DUAL_QUATERNION } else { 0 }
                    | match (self.culling, self.cull_view) {
                        (false, _) => 0,
                        (true, None) => FRAME_CULL,
                        (true, Some(_)) => FRAME_CULL | FRAME_CULL_VIEW,
                    }
                    | if self.lod_interpolation {
                        FRAME_LOD_INTERPOLATE
                    } else {
                        0
                    }
                    | if self.culling && self.cull_view.is_some() && self.vat_size.is_some() {
                        FRAME_VAT
                    } else {
                        0
                    },
                output_base: (crate::layout::outputs_offset(p.max_instances) / 16) as u32,
                morph_api_base: p.max_instances * self.morph_room,
                look_at: self.look_at.extend(0.0),
                cull_planes,
                lod,
                view_w: self.cull_view.map_or(glam::Vec4::W, |m| m.row(3)),
                key_base: p.max_joints
                    + if self.library.has_sockets() {
                        p.max_instances * crate::layout::MAX_SOCKETS
                    } else {
                        0
                    },
                vat_size: self.vat_size.unwrap_or(0.0),
                _pad_b: 0,
                _pad_c: 0,
                sections: crate::shaders::Resource::section_bases(p.max_instances, p.max_joints, self.page_options()),
            };
            upload.frames.push((k, frame));
        }
        if self.layer_defs_uploaded < self.layer_defs.len() {
            upload.layer_defs = Some((
                self.layer_defs_uploaded,
                self.layer_defs[self.layer_defs_uploaded..].to_vec(),
            ));
            self.layer_defs_uploaded = self.layer_defs.len();
        }
        // Changed instances, in runs of consecutive indices within a page: an edit at instance 3
        // and one at 9,000 upload two instances, not everything between them.
        let mut dirty = std::mem::take(&mut self.dirty);
        dirty.sort_unstable();
        for &i in &dirty {
            self.instances[i].vat = self.vat_of(i);
        }
        for run in runs(&dirty, &self.page_of) {
            let page = self.page_of[run.start] as usize;
            let first = run.start - self.pages[page].first;
            upload.instances.push((page, first, self.instances[run].to_vec()));
        }
        for &i in &dirty {
            self.dirty_mark[i] = false;
        }
        dirty.clear();
        self.dirty = dirty;
        // Clock writes, coalesced the same way (a later write to an instance wins).
        let mut writes = std::mem::take(&mut self.clock_writes);
        writes.reverse();
        writes.sort_by_key(|(i, _)| *i);
        writes.dedup_by_key(|(i, _)| *i);
        let indices: Vec<usize> = writes.iter().map(|(i, _)| *i).collect();
        let mut k = 0;
        for run in runs(&indices, &self.page_of) {
            let page = self.page_of[run.start] as usize;
            let clocks: Vec<GpuClock> = writes[k..k + run.len()].iter().map(|(_, c)| *c).collect();
            upload.clocks.push((page, run.start - self.pages[page].first, clocks));
            k += run.len();
        }
        self.take_morph_upload(&mut upload.sections);
        self.take_machine_upload(&mut upload.sections);
    }
}

/// Runs of consecutive indices of `sorted` (sorted, no repeats) that lie in one page.
pub(super) fn runs(sorted: &[usize], page_of: &[u32]) -> Vec<std::ops::Range<usize>> {
    let mut out: Vec<std::ops::Range<usize>> = Vec::new();
    for &i in sorted {
        match out.last_mut() {
            Some(r) if r.end == i && page_of[r.start] == page_of[i] => r.end = i + 1,
            _ => out.push(i..i + 1),
        }
    }
    out
}
