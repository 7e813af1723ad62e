//! Which characters may be drawn with a vertex animation texture ([`crate::vat`]) in their
//! skinned mesh's place, and from how small on screen.

use super::Controller;
use crate::error::{Error, Result};
use crate::layout::{GpuInstance, LAYER_ON, MAX_LAYERS};
use crate::library::SkeletonId;
use crate::vat::Vat;

/// A projected size below which [`Controller::set_vat_size`] suits a crowd seen by a game camera:
/// a character 2.3 m in bound radius seen by a 60° camera is drawn by its VAT from about 400 m.
pub const DEFAULT_VAT_SIZE: f32 = 0.01;

impl Controller {
    /// Characters of skeleton `skeleton` may be drawn with `vat` (baked for that skeleton from
    /// this library, [`crate::offline::vat::bake_vat`]) in their skinned mesh's place: when culling
    /// with a view, VAT on ([`Controller::set_vat_size`]), and a character is smaller on screen
    /// than that size and plays alone a clip `vat` holds — no blend tree, cross-fade,
    /// inertialization or layer — it is neither evaluated nor skinned: its clock runs as always
    /// (events, root motion and curves stay exact) and a VAT draw shows that clip at the clock's
    /// time ([`crate::gpu::SkinnedRenderer::set_vat`]), within the VAT's reported error of its
    /// skinned pose. What a VAT does not hold is left out while it plays: IK corrections (feet on
    /// the ground, a head turned to a target), morph weights of its own and socket matrices
    /// (those of its last evaluation stay). Every character of the skeleton must then be drawn
    /// with `vat`'s mesh. `None` stops it.
    ///
    /// Errors (nothing changes): a skeleton of another library or one that does not exist; a VAT
    /// baked for another skeleton, or whose clips are not this library's (by index and name).
    pub fn set_vat(&mut self, skeleton: SkeletonId, vat: Option<&Vat>) -> Result<()> {
        let k = skeleton.check(self.library.tag())?;
        let err = |what: String| Error::Limit {
            what: format!("set_vat for skeleton {k}: {what}"),
        };
        if k as usize >= self.library.skeletons().len() {
            return Err(err("no such skeleton".into()));
        }
        let clips = match vat {
            None => Vec::new(),
            Some(vat) => {
                check_vat(vat, &self.library, k).map_err(err)?;
                vat.clips.iter().map(|c| c.clip).collect()
            }
        };
        if self.vat_clips.len() <= k as usize {
            self.vat_clips.resize(k as usize + 1, Vec::new());
        }
        self.vat_clips[k as usize] = clips;
        for i in 0..self.instances.len() {
            if self.instances[i].skeleton == k {
                self.mark_dirty(i);
            }
        }
        Ok(())
    }

    /// Below this projected size (a character's bound radius in half view heights, as
    /// [`Controller::set_update_rates`] measures it) a character that may is drawn with its VAT
    /// ([`Controller::set_vat`]); `None`, the default, draws none with one. A character 2.3 m in
    /// bound radius seen by a 60° camera is 0.01 at about 400 m.
    ///
    /// Errors (nothing changes): an animator that does not cull, or a size that is negative or not
    /// finite.
    pub fn set_vat_size(&mut self, size: Option<f32>) -> Result<()> {
        if !self.culling {
            return Err(Error::Limit {
                what: "set_vat_size: the animator does not cull (AnimatorDesc::culling)".into(),
            });
        }
        if let Some(s) = size
            && !(s.is_finite() && s >= 0.0)
        {
            return Err(Error::Limit {
                what: format!("set_vat_size: a size of {s} (must be finite and at least 0)"),
            });
        }
        self.vat_size = size;
        Ok(())
    }

    /// The size set by [`Controller::set_vat_size`].
    #[must_use]
    pub fn vat_size(&self) -> Option<f32> {
        self.vat_size
    }

    /// [`GpuInstance::vat`] of instance `index` as it stands: 1 + its clip when its skeleton's VAT
    /// holds that clip and it plays it with no tree or layer.
    pub(super) fn vat_of(&self, index: usize) -> u32 {
        let inst: &GpuInstance = &self.instances[index];
        let Some(clips) = self.vat_clips.get(inst.skeleton as usize) else {
            return 0;
        };
        let layers = (0..MAX_LAYERS).fold(0, |m, k| m | LAYER_ON << k);
        let plain = inst.tree_nodes == 0 && inst.flags & layers == 0;
        if plain && clips.contains(&inst.clip) {
            inst.clip + 1
        } else {
            0
        }
    }
}

/// Whether `vat` was baked for skeleton `k` of `library`, its clips the library's by index and
/// name; what is wrong otherwise.
pub(crate) fn check_vat(vat: &Vat, library: &crate::AnimationLibrary, k: u32) -> std::result::Result<(), String> {
    if vat.skeleton != k {
        return Err(format!("VAT '{}' was baked for skeleton {}", vat.mesh, vat.skeleton));
    }
    for c in &vat.clips {
        let ok = library.clip_at(c.clip).is_some_and(|id| {
            library.clip_names()[c.clip as usize] == c.name
                && library.clip_skeleton(id).ok().and_then(|s| s.check(library.tag()).ok()) == Some(k)
        });
        if !ok {
            return Err(format!(
                "VAT '{}' holds clip {} '{}', which is not that clip of this library's skeleton {k}",
                vat.mesh, c.clip, c.name
            ));
        }
    }
    Ok(())
}
