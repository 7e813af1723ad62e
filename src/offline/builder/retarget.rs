//! [`LibraryBuilder::add_retargeted_skeleton`]: a skeleton that plays another's clips on the GPU
//! through the reference's step-2 constants, with no baked copy of a clip.

use super::LibraryBuilder;
use crate::error::{Error, Result};
use crate::layout::GpuRetarget;
use crate::library::SkeletonId;
use crate::offline::retarget::{BoneMap, RetargetOptions, Retargeter};
use crate::reach::{self, Extent};
use crate::skeleton::Skeleton;

impl LibraryBuilder {
    /// Adds `target`, a skeleton that plays the clips (and blend trees) of skeleton `source` through
    /// a run-time retarget: a character of it ([`crate::gpu::InstanceDesc::with_skeleton`])
    /// turns each mapped joint in model space as its source joint turns from its rest, and
    /// places its retarget root at the source root's position times `h_T / h_S`, as
    /// [`Retargeter::retarget`] does offline; the sample stage applies each joint's two constant
    /// quaternions (`Retargeter::joint_constants`) to the source's samples, so no clip is
    /// copied. Root motion is scaled by the same ratio. `map` and `options` are those of
    /// [`Retargeter::new`].
    ///
    /// A retargeted skeleton plays only its source's clips: clips of its own go to a skeleton
    /// added with [`LibraryBuilder::add_skeleton`] (the same skeleton may be added both ways).
    /// Its masks are its own ([`LibraryBuilder::add_mask`] by its joint names).
    ///
    /// Between two keys a joint driven through more than one source joint (a target spine of
    /// fewer joints than the source's) and the retarget root interpolate the source's joints
    /// rather than the retargeted keys: at the keys both forms agree.
    ///
    /// # Errors
    /// [`Error::ForeignId`] for a skeleton of another library; [`Error::Retarget`] when `source`
    /// is itself retargeted, for options with goals (offline only), or what [`Retargeter::new`]
    /// refuses; an error naming the joint when
    /// a pose of the source's clips would place `target`'s retarget root out of reach. On error
    /// nothing is added.
    pub fn add_retargeted_skeleton(
        &mut self,
        target: Skeleton,
        source: SkeletonId,
        map: &BoneMap,
        options: &RetargetOptions,
    ) -> Result<SkeletonId> {
        let s = source.check(self.lib.tag)?;
        let source_skeleton = self.skeleton(source)?;
        if self.lib.retarget_at(s).is_some() {
            return Err(Error::Retarget {
                from: source_skeleton.name().to_string(),
                to: target.name().to_string(),
                what: "the source plays another skeleton's clips itself: retarget from that skeleton".into(),
            });
        }
        if !options.goals.is_empty() {
            return Err(Error::Retarget {
                from: source_skeleton.name().to_string(),
                to: target.name().to_string(),
                what: "foot and hand goals run offline (Retargeter::retarget); at run time give the character IK goals"
                    .into(),
            });
        }
        let retargeter = Retargeter::new(source_skeleton, &target, map, options)?;
        let table = retargeter.gpu_table(s, self.lib.gpu_skeletons[s as usize].joint_offset);
        // What the heap's word of a joint holds (layout::RETARGET_WORD_SOURCE).
        let fits = |e: &crate::layout::GpuRetargetJoint| {
            e.source == crate::layout::RETARGET_UNMAPPED
                || (e.source < crate::layout::RETARGET_WORD_SOURCE && e.links <= 255)
        };
        if let Some(j) = table.joints.iter().position(|e| !fits(e)) {
            return Err(Error::Retarget {
                from: source_skeleton.name().to_string(),
                to: target.name().to_string(),
                what: format!(
                    "joint '{}' is driven through {} source joints, or by source joint {}: the run-time form holds at most 255 and joints below {}",
                    target.joint_names()[j],
                    table.joints[j].links,
                    table.joints[j].source,
                    crate::layout::RETARGET_WORD_SOURCE
                ),
            });
        }
        let extents = retargeted_extents(&target, &table, source_skeleton, &self.lib.skeleton_extents[s as usize])
            .map_err(|(j, what)| Error::Skeleton {
                skeleton: target.name().to_string(),
                joint: j,
                joint_name: target.joint_names()[j].clone(),
                what: format!("retargeted from '{}', {what}", source_skeleton.name()),
            })?;
        let id = self.add_skeleton(target);
        let k = id.index() as usize;
        self.lib.skeleton_extents[k] = extents;
        self.lib.retargets[k] = Some(table);
        Ok(id)
    }

    /// The extents of every skeleton retargeted from skeleton `source` when its own become
    /// `source_extents`: (skeleton, extents), or an error naming the skeleton and joint that
    /// would reach too far (for a clip being added).
    pub(super) fn retargeted_from(
        &self,
        source: u32,
        source_extents: &[Extent],
    ) -> std::result::Result<Vec<(usize, Vec<Extent>)>, String> {
        let source_skeleton = &self.lib.skeletons[source as usize];
        let mut out = Vec::new();
        for (k, table) in self.lib.retargets.iter().enumerate() {
            let Some(table) = table.as_ref().filter(|t| t.source == source) else {
                continue;
            };
            let target = &self.lib.skeletons[k];
            let extents = retargeted_extents(target, table, source_skeleton, source_extents).map_err(|(j, what)| {
                format!(
                    "retargeted onto skeleton '{}', joint '{}': {what}",
                    target.name(),
                    target.joint_names()[j]
                )
            })?;
            out.push((k, extents));
        }
        Ok(out)
    }
}

/// `target`'s local extents when it plays clips of `source` whose extents are `source_extents`
/// through `table`: its rest's, but for the retarget root, whose translation is the source
/// root's model-space position (as far as [`reach`] bounds it) through `root_from_source`;
/// checked against [`reach::MAX_REACH`].
fn retargeted_extents(
    target: &Skeleton,
    table: &GpuRetarget,
    source: &Skeleton,
    source_extents: &[Extent],
) -> std::result::Result<Vec<Extent>, (usize, String)> {
    let source_reach = source.reach(source_extents, &[]).map_err(|(j, what)| {
        let root = table
            .joints
            .iter()
            .position(|e| e.flags & crate::layout::RETARGET_ROOT != 0);
        (
            root.unwrap_or(0),
            format!("source joint '{}': {what}", source.joint_names()[j]),
        )
    })?;
    let mut extents = target.rest_extents();
    for (j, e) in table.joints.iter().enumerate() {
        if e.flags & crate::layout::RETARGET_ROOT == 0 {
            continue;
        }
        let position = source_reach.get(e.source as usize).map_or(0.0, |r| r.translation);
        let (linear, translation) = reach::matrix_reach(&table.root_from_source.to_mat4());
        extents[j].translation = extents[j].translation.max(linear * position + translation);
    }
    target.reach(&extents, &[])?;
    Ok(extents)
}
