//! Each instance's morph weights: set by the CPU, uploaded with the instance, read by the
//! skinning module's `wgpu_anim_morph` in the vertex stage.

use super::Controller;
use crate::error::{Error, Result};
use crate::morph::{MAX_MORPH_WEIGHT, weight_ok};

impl Controller {
    /// Morph weights per instance the animator keeps room for
    /// ([`crate::gpu::AnimatorDesc::morph_weights`]); 0: instances do not morph.
    #[must_use]
    pub fn morph_room(&self) -> u32 {
        self.morph_room
    }

    /// Room for `room` morph weights per instance (set once, before any instance is added).
    pub(crate) fn keep_morph_weights(&mut self, room: u32) {
        debug_assert!(self.instances.is_empty());
        self.morph_room = room;
    }

    /// Whether the sample stage blends the instances' morph weights with their clips' weight
    /// tracks (the library's clips drive some and the animator keeps room): the CPU then writes
    /// the instances' own weights after `GpuFrame::morph_api_base`, else where the vertex stage
    /// reads them.
    #[must_use]
    pub fn morph_weights_driven(&self) -> bool {
        self.morph_room > 0 && self.library.has_morph_weights()
    }

    /// The morph weights in use of a new instance of skeleton `skeleton`: those its clips drive
    /// (checked against the room).
    pub(super) fn driven_morph_count(&self, index: usize, skeleton: u32) -> Result<u32> {
        if self.morph_room == 0 {
            return Ok(0);
        }
        let driven = self.library.morph_targets(skeleton);
        if driven > self.morph_room {
            return Err(Error::Instance {
                instance: index,
                what: format!(
                    "its skeleton's clips drive {driven} morph targets, and the animator keeps room for {} \
                     (AnimatorDesc::morph_weights)",
                    self.morph_room
                ),
            });
        }
        Ok(driven)
    }

    /// Sets instance `index`'s own morph weights, one per target of the mesh it is drawn with, in
    /// the targets' order ([`crate::MorphSet::names`]); targets past the end of `weights` weigh
    /// 0. From the next frame on, its vertices move by each target's displacements times its
    /// weight before skinning. Where the clips it plays drive a target
    /// ([`crate::Clip::morph_weights`]), the GPU blends their tracks instead (cross-fades, blend
    /// trees and layers as for the pose), and this weight fills in for a clip without a track
    /// for it. Only the targets up to the last non-zero weight, or up to the last one its clips
    /// drive, are looked at; an instance with none costs its vertices one read.
    ///
    /// Errors (nothing changes): an instance that does not exist, more weights than the
    /// animator keeps room for, a weight that is not finite or beyond ±[`MAX_MORPH_WEIGHT`].
    pub fn set_morph_weights(&mut self, index: usize, weights: &[f32]) -> Result<()> {
        let err = |what: String| Error::Instance { instance: index, what };
        if index >= self.instances.len() {
            return Err(err(format!("does not exist ({} instances)", self.instances.len())));
        }
        let room = self.morph_room as usize;
        if weights.len() > room {
            return Err(err(format!(
                "{} morph weights, and the animator keeps room for {room} per instance \
                 (AnimatorDesc::morph_weights)",
                weights.len()
            )));
        }
        if let Some((t, w)) = weights.iter().enumerate().find(|(_, w)| !weight_ok(**w)) {
            return Err(err(format!(
                "morph weight {t} is {w}: it must be finite and within ±{MAX_MORPH_WEIGHT}"
            )));
        }
        let driven = self.driven_morph_count(index, self.instances[index].skeleton)?;
        let slot = &mut self.morph_weights[index * room..(index + 1) * room];
        slot.fill(0.0);
        slot[..weights.len()].copy_from_slice(weights);
        let own = weights
            .iter()
            .rposition(|&w| w != 0.0)
            .map_or(0, |last| last as u32 + 1);
        let count = own.max(driven);
        self.edit_both(index, |inst| inst.morph_count = count);
        self.mark_morph_dirty(index);
        Ok(())
    }

    /// Instance `index`'s morph weights (as many as the animator keeps room for), or `None`
    /// when there is no such instance.
    #[must_use]
    pub fn morph_weights(&self, index: usize) -> Option<&[f32]> {
        let room = self.morph_room as usize;
        (index < self.instances.len()).then(|| &self.morph_weights[index * room..(index + 1) * room])
    }

    /// Where instance `first` of page `page`'s own morph weights go in the page's buffer of
    /// them (its character state, at [`crate::shaders::Resource::MorphWeights`]' place), in bytes:
    /// after `GpuFrame::morph_api_base` when the sample stage blends them
    /// ([`Controller::morph_weights_driven`]), else where the vertex stage reads them.
    #[must_use]
    pub fn own_morph_offset(&self, page: usize, first: usize) -> u64 {
        let room = u64::from(self.morph_room);
        let capacity = self.page_capacity(page);
        let base = if self.morph_weights_driven() {
            u64::from(capacity) * room
        } else {
            0
        };
        let (weights, _) = crate::shaders::Resource::MorphWeights
            .place(capacity, self.page_max_joints(page), self.page_options())
            .unwrap_or_default();
        weights + (base + first as u64 * room) * 4
    }

    /// Marks instance `index`'s morph weights for the next frame's upload (once).
    pub(super) fn mark_morph_dirty(&mut self, index: usize) {
        if self.morph_marked.len() <= index {
            self.morph_marked.resize(index + 1, false);
        }
        if !self.morph_marked[index] {
            self.morph_marked[index] = true;
            self.morph_dirty.push(index);
        }
    }

    /// The morph weights changed since the last frame, as writes into their section of runs of
    /// consecutive instances per page.
    pub(super) fn take_morph_upload(&mut self, writes: &mut Vec<super::SectionWrite>) {
        let mut dirty = std::mem::take(&mut self.morph_dirty);
        for &i in &dirty {
            self.morph_marked[i] = false;
        }
        dirty.sort_unstable();
        let room = self.morph_room as usize;
        for run in super::upload::runs(&dirty, &self.page_of) {
            let page = self.page_of[run.start] as usize;
            let weights = &self.morph_weights[run.start * room..run.end * room];
            writes.push(super::SectionWrite {
                page,
                resource: crate::shaders::Resource::MorphWeights,
                offset: self.own_morph_offset(page, run.start - self.pages[page].first),
                words: weights.iter().map(|w| w.to_bits()).collect(),
            });
        }
    }
}
