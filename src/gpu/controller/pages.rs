//! Pages: their capacities and fill, adding instances in order across them and removing them
//! from the end.

use super::{Controller, TransitionTrack};
use crate::error::{Error, Result};
use crate::gpu::InstanceDesc;
use crate::layout::{GpuInstance, ROOT_MOTION};

/// A page's capacity and what is in it. Pages fill in order, each to its instance capacity.
/// `#[non_exhaustive]`: what the controller says of a page, to read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PageState {
    /// Global index of its first instance.
    pub first: usize,
    /// Instances in it.
    pub len: usize,
    /// Instance capacity.
    pub max_instances: u32,
    /// Joint capacity (its local pose buffer holds this many current poses and, with layers, as
    /// many mesh-space deltas; its pose history as many snapshots and, with inertialization, as
    /// many velocities).
    pub max_joints: u32,
    /// Joints in use.
    pub joints_used: u32,
}

impl Controller {
    /// What the animator's pages hold beyond their instances and joints: what sizes their
    /// buffers and places their sections ([`crate::shaders::Resource::place`]).
    #[must_use]
    pub fn page_options(&self) -> crate::shaders::PageOptions {
        crate::shaders::PageOptions {
            sockets: self.library().has_sockets(),
            dual_quaternion: self.dual_quaternion(),
            morph_weights: self.morph_room(),
            inertialization: self.inertialization(),
            culling: self.culling(),
            lod_interpolation: self.lod_interpolation(),
            layers: self.layers(),
        }
    }

    /// Page `page`'s capacity and fill.
    #[must_use]
    pub fn page_state(&self, page: usize) -> Option<&PageState> {
        self.pages.get(page)
    }

    /// Adds an instance and returns its index. Its data reaches the GPU with the
    /// next frame ([`crate::Animator::prepare`]).
    ///
    /// Errors (nothing is added): a clip or blend tree of another library
    /// ([`Error::ForeignId`](crate::Error::ForeignId)), time or rate not finite, a world
    /// matrix that is not affine, `Repeat(0)`, or the capacity in instances or joints is full.
    pub fn add_instance(&mut self, desc: &InstanceDesc) -> Result<usize> {
        let index = self.instances.len();
        if index as u32 >= self.max_instances {
            return Err(Error::Limit {
                what: format!("the animator holds at most {} instances", self.max_instances),
            });
        }
        // Pages fill in order, each to its instance capacity: instance `index` belongs to the
        // first page whose capacity, added to the pages before it, exceeds `index`.
        let mut page = self.page_of.last().map_or(0, |&p| p as usize);
        if self.pages[page].len as u32 >= self.pages[page].max_instances {
            page += 1;
        }
        let (_, _, joint_count, _, _) = self.target(index, desc)?;
        let p = &self.pages[page];
        if p.joints_used + joint_count > p.max_joints {
            return Err(Error::Limit {
                what: format!(
                    "instance {index} needs {joint_count} joints but only {} of {} are free in its page ({page})",
                    p.max_joints - p.joints_used,
                    p.max_joints
                ),
            });
        }
        let (mut inst, clock) = self.to_gpu(index, desc, self.pages[page].joints_used)?;
        inst.morph_offset = self.pages[page].len as u32 * self.morph_room;
        inst.morph_count = self.driven_morph_count(index, inst.skeleton)?;
        self.morph_weights
            .resize(self.morph_weights.len() + self.morph_room as usize, 0.0);
        let p = &mut self.pages[page];
        if p.len == 0 {
            p.first = index;
        }
        p.len += 1;
        p.joints_used += inst.joint_count;
        self.page_of.push(page as u32);
        if self.skeleton_runs.last().is_none_or(|&(_, k)| k != inst.skeleton) {
            self.skeleton_runs.push((index, inst.skeleton));
        }
        self.dirty_mark.push(false);
        self.instances.push(inst);
        if self.morph_room > 0 {
            // Its own weights start at 0, over whatever an instance removed from its place left.
            self.mark_morph_dirty(index);
        }
        self.transitions.push(TransitionTrack::default());
        self.held.push(None);
        self.machines.push(None);
        self.shown_since.push(self.frames + 1);
        self.clock_writes.push((index, clock));
        self.mark_dirty(index);
        Ok(index)
    }

    /// Removes every instance from `len` on (the others keep their indices and state).
    pub fn truncate(&mut self, len: usize) {
        // Instances added again at these indices are not on the GPU until the next frame.
        self.uploaded = self.uploaded.min(len);
        if len < self.instances.len() {
            for p in &mut self.pages {
                if p.first + p.len > len {
                    let keep = len.saturating_sub(p.first).min(p.len);
                    p.joints_used = if keep == 0 {
                        0
                    } else {
                        self.instances[p.first + keep].joint_offset
                    };
                    p.len = keep;
                }
            }
            let removed = self.instances[len..]
                .iter()
                .filter(|i| i.flags & ROOT_MOTION != 0)
                .count();
            self.root_motion_count -= removed;
            self.instances.truncate(len);
            self.morph_weights.truncate(len * self.morph_room as usize);
            self.morph_dirty.retain(|&i| i < len);
            self.morph_marked.truncate(len);
            self.page_of.truncate(len);
            let runs = self.skeleton_runs.partition_point(|&(first, _)| first < len);
            self.skeleton_runs.truncate(runs);
            self.transitions.truncate(len);
            self.held.truncate(len);
            self.machines.truncate(len);
            self.machine_edits.retain(|(i, _)| *i < len);
            self.shown_since.truncate(len);
            self.held_list.retain(|&i| i < len);
            self.clock_writes.retain(|(i, _)| *i < len);
            self.dirty.retain(|&i| i < len);
            self.dirty_mark.truncate(len);
        }
    }

    /// Joints in use in the first page (over all instances when there is one page).
    #[must_use]
    pub fn joint_count(&self) -> u32 {
        self.pages[0].joints_used
    }

    /// Pages holding at least one instance (pages fill in order: pages `0..pages_in_use()`).
    #[must_use]
    pub fn pages_in_use(&self) -> usize {
        self.pages.iter().take_while(|p| p.len > 0).count()
    }

    /// Number of pages (see [`crate::AnimatorDesc`]).
    #[must_use]
    pub fn page_count(&self) -> usize {
        self.pages.len()
    }

    /// The page of instance `index` and its index within that page (its instance in the page's
    /// instance buffer, its `joint_offset` into the page's palette buffer).
    #[must_use]
    pub fn page_of(&self, index: usize) -> Option<(usize, usize)> {
        let p = *self.page_of.get(index)? as usize;
        Some((p, index - self.pages[p].first))
    }

    /// The instances of page `page` (global indices `page_range(page)`).
    #[must_use]
    pub fn page_instances(&self, page: usize) -> &[GpuInstance] {
        let r = self.page_range(page);
        &self.instances[r]
    }

    /// Global indices of the instances in page `page` (empty past the last page in use).
    #[must_use]
    pub fn page_range(&self, page: usize) -> std::ops::Range<usize> {
        self.pages.get(page).map_or(0..0, |p| p.first..p.first + p.len)
    }

    /// Instance capacity of page `page`. Pages fill in order, so page `k` holds the instances
    /// from the sum of the capacities of the pages before it on.
    #[must_use]
    pub fn page_capacity(&self, page: usize) -> u32 {
        self.pages.get(page).map_or(0, |p| p.max_instances)
    }

    /// Joint capacity of page `page`: its local pose buffer holds this many current poses, then
    /// as many snapshots, then as many mesh-space deltas.
    #[must_use]
    pub fn page_max_joints(&self, page: usize) -> u32 {
        self.pages.get(page).map_or(0, |p| p.max_joints)
    }

    /// The first instance of `range` (up to the last instance there is) whose skeleton is not
    /// skeleton `k` (its index in the library), and that instance's skeleton; `None` when every
    /// one is of skeleton `k`. A look-up per run of instances of one skeleton, not per instance.
    pub(crate) fn other_skeleton_in(&self, k: u32, range: std::ops::Range<usize>) -> Option<(usize, u32)> {
        let end = range.end.min(self.instances.len());
        if range.start >= end {
            return None;
        }
        // The run holding `range.start` (the first run starts at instance 0), and those after it.
        let first = self
            .skeleton_runs
            .partition_point(|&(start, _)| start <= range.start)
            .saturating_sub(1);
        self.skeleton_runs[first..]
            .iter()
            .take_while(|&&(start, _)| start < end)
            .find(|&&(_, skeleton)| skeleton != k)
            .map(|&(start, skeleton)| (start.max(range.start), skeleton))
    }

    /// Joints in use in page `page`.
    #[must_use]
    pub fn page_joint_count(&self, page: usize) -> u32 {
        self.pages.get(page).map_or(0, |p| p.joints_used)
    }
}
