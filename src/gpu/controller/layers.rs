//! Layers: each instance's layer slots, and the layer definitions they share.

use super::Controller;
use crate::error::{Error, Result};
use crate::gpu::{Layer, LayerMode};
use crate::layout::{
    GpuLayer, GpuLayerDef, LAYER_ON, LOOP_FOREVER, LOOP_ONCE, MAX_LAYER_DEFS, MAX_LAYERS, NO_MASK, NO_TIME_PARAMETER,
    layer_mode,
};

impl Controller {
    /// Sets layer `slot` (0..3) of instance `index`; layers apply in slot order on top of the base
    /// state. `None` switches the layer off. The layer (re)starts at `layer.start` when its state
    /// or mode changes, or when `restart` is true.
    ///
    /// Errors: an animator made without layers ([`crate::gpu::AnimatorDesc::layers`] false;
    /// switching a layer off is always allowed), no such instance or slot, a clip, tree or mask
    /// of another library
    /// ([`Error::ForeignId`]) or of another skeleton, a weight, start or rate that is not finite, a time parameter above 3,
    /// an additive layer that, with the instance's other additive layers, could move a joint,
    /// skinning matrix or socket past [`reach::MAX_REACH`](crate::reach::MAX_REACH).
    pub fn set_layer(&mut self, index: usize, slot: usize, layer: Option<&Layer>, restart: bool) -> Result<()> {
        let err = |what: String| Error::Instance { instance: index, what };
        let inst = *self.instances.get(index).ok_or_else(|| err("does not exist".into()))?;
        if slot >= MAX_LAYERS as usize {
            return Err(err(format!(
                "layer slot {slot} does not exist (there are {MAX_LAYERS})"
            )));
        }
        let Some(layer) = layer else {
            self.edit_both(index, |inst| inst.set_layer_flags(slot, None));
            return Ok(());
        };
        if !self.layers {
            return Err(err(format!(
                "layer {slot}: this animator plays no layers (AnimatorDesc::layers is false)"
            )));
        }
        if !layer.weight.is_finite() || !layer.start.is_finite() || !layer.rate.is_finite() {
            return Err(err(format!(
                "layer {slot}: weight {}, start {} and rate {} must be finite",
                layer.weight, layer.start, layer.rate
            )));
        }
        let (clip, skeleton, _, tree_offset, tree_nodes) = match (layer.tree, layer.clip) {
            (Some(tree), _) => self.tree_target(index, tree)?,
            (None, Some(clip)) => self.clip_target(index, clip)?,
            (None, None) => return Err(err(format!("layer {slot} plays neither a clip nor a blend tree"))),
        };
        if !self.library.plays_on(skeleton, inst.skeleton) {
            return Err(err(format!(
                "layer {slot} animates skeleton {skeleton}, but the instance has skeleton {}",
                inst.skeleton
            )));
        }
        if skeleton != inst.skeleton && layer.mode != LayerMode::Override {
            return Err(err(format!(
                "layer {slot}: an additive layer of skeleton {skeleton}'s clips on a character retargeted onto skeleton {} \
                 (its difference poses are of the source's bones): play it as an override layer, or retarget the clips offline",
                inst.skeleton
            )));
        }
        let mask = match layer.mask {
            None => NO_MASK,
            Some(m) => {
                let k = m.check(self.library.tag())?;
                let info = self
                    .library()
                    .masks()
                    .get(k as usize)
                    .ok_or_else(|| err(format!("mask {k} does not exist")))?;
                if info.skeleton != inst.skeleton {
                    return Err(err(format!(
                        "mask {k} was built for skeleton {}, not {}",
                        info.skeleton, inst.skeleton
                    )));
                }
                info.offset
            }
        };
        let time_parameter = match layer.time_parameter {
            None => NO_TIME_PARAMETER,
            Some(p) if p < 4 => p,
            Some(p) => return Err(err(format!("layer {slot}: time parameter {p} does not exist (0..4)"))),
        };
        let def = GpuLayerDef {
            mode: match layer.mode {
                LayerMode::Override => layer_mode::OVERRIDE,
                LayerMode::AdditiveLocal => layer_mode::ADDITIVE_LOCAL,
                LayerMode::AdditiveMesh => layer_mode::ADDITIVE_MESH,
            },
            mask,
            clip,
            tree_offset,
            tree_nodes,
            time_parameter,
            loop_mode: if layer.once { LOOP_ONCE } else { LOOP_FOREVER },
            _pad: 0,
        };
        if def.mode != layer_mode::OVERRIDE {
            // Additive layers add translations and multiply scales: the instance's additive
            // layers together, this one in its slot, must keep every pose within reach.
            let mut additive: Vec<(u32, u32, u32)> = (0..MAX_LAYERS as usize)
                .filter(|&k| k != slot && inst.flags & (LAYER_ON << k) != 0)
                .map(|k| &self.layer_defs[inst.layers[k].def as usize])
                .filter(|d| d.mode != layer_mode::OVERRIDE)
                .map(|d| (d.clip, d.tree_offset, d.tree_nodes))
                .collect();
            additive.push((def.clip, def.tree_offset, def.tree_nodes));
            self.library()
                .check_additive_layers(inst.skeleton, &additive)
                .map_err(|what| err(format!("additive layer {slot}: {what}")))?;
        }
        let def_index = self
            .layer_def_index(def)
            .map_err(|what| err(format!("layer {slot}: {what}")))?;
        let changed = inst.flags & (LAYER_ON << slot) == 0 || {
            let old = &self.layer_defs[inst.layers[slot].def as usize];
            (old.mode, old.clip, old.tree_offset, old.tree_nodes)
                != (def.mode, def.clip, def.tree_offset, def.tree_nodes)
        };
        let (weight, rate, start_time) = (layer.weight.clamp(0.0, 1.0), layer.rate, layer.start);
        self.edit_both(index, |inst| {
            let seq = if restart || changed {
                inst.layer_seq = inst.layer_seq.wrapping_add(1);
                inst.layer_seq
            } else {
                inst.layers[slot].seq
            };
            inst.layers[slot] = GpuLayer {
                def: def_index,
                weight,
                rate,
                start_time,
                seq,
            };
            inst.set_layer_flags(slot, Some(&def));
        });
        Ok(())
    }

    /// The index of layer definition `def`, added if it is new (it reaches the GPU with the
    /// next frame ([`crate::Animator::prepare`])). Errors when [`MAX_LAYER_DEFS`] are in use.
    fn layer_def_index(&mut self, def: GpuLayerDef) -> std::result::Result<u32, String> {
        if let Some(&k) = self.layer_def_indices.get(&def) {
            return Ok(k);
        }
        if self.layer_defs.len() as u32 >= MAX_LAYER_DEFS {
            return Err(format!(
                "the animator already has {MAX_LAYER_DEFS} layer definitions (distinct modes, clips or trees, \
                 masks, loop modes and time parameters), the most it holds"
            ));
        }
        let k = self.layer_defs.len() as u32;
        self.layer_defs.push(def);
        self.layer_def_indices.insert(def, k);
        Ok(k)
    }

    /// The layer definitions instances' layers index (`GpuLayer::def`), in the order of the
    /// layer definition buffer.
    #[must_use]
    pub fn layer_defs(&self) -> &[GpuLayerDef] {
        &self.layer_defs
    }

    /// Sets the weight of layer `slot` of instance `index` (clamped to [0, 1]).
    pub fn set_layer_weight(&mut self, index: usize, slot: usize, weight: f32) -> Result<()> {
        if index >= self.instances.len() || slot >= MAX_LAYERS as usize || !weight.is_finite() {
            return Err(Error::Instance {
                instance: index,
                what: format!("layer {slot} does not exist, or weight {weight} is not finite"),
            });
        }
        self.edit_both(index, |inst| inst.layers[slot].weight = weight.clamp(0.0, 1.0));
        Ok(())
    }
}
