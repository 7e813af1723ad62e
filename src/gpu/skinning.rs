//! [`SkinBinding`]: what a vertex shader of your own needs to skin an animator's characters — a
//! bind group layout, a bind group per page and a WGSL module — at a group and bindings you choose.

use super::Animator;
use super::culled_draws::CulledDraws;
use crate::error::{Error, Result};
use crate::shaders::{SKIN_PLACEMENT_DEFS, SKINNING_MODULE, ShaderDef};

/// Where your vertex shader finds an animator's palette and instances: bind group `group`, the
/// palette at binding `palette`, the instances at `palette + 1`, with `previous` last frame's
/// palettes at `palette + 2` (for motion vectors; the animator must keep them,
/// [`Animator::keep_previous_palettes`]), with `dual_quaternion` the dual quaternions at
/// `palette + 3` (the animator must keep them, [`super::AnimatorDesc::dual_quaternion`]) and with
/// both last frame's dual quaternions at `palette + 4`, with `morph` the page's morph weights at
/// `palette + 5` and a mesh's morph targets at `palette + 6`, with `visible` the page's list of
/// the instances evaluated this frame at `palette + 7` (the animator must cull,
/// [`super::AnimatorDesc::culling`]), with `vat` a mesh's vertex animation texture at
/// `palette + 8` ([`super::GpuVat`]), visible to the vertex stage; and the mesh's vertex inputs
/// from shader location `location` on.
///
/// - The palette is an array of 3×4 row-major affine matrices (`math::Affine`: rows `x`, `y`, `z`,
///   48 bytes each); instance `i` of a page has its joints at `joint_offset` (the WGSL module's
///   `wgpu_anim_instances[i].joint_offset`, also `animator.controller().instances()[i].joint_offset`).
/// - The instances are the page's `layout::GpuInstance`s, 320 bytes each; drawing reads the
///   palette offset, the world transform and the tint.
/// - The WGSL module ([`SkinBinding::wgsl`], or [`SKINNING_MODULE`] with naga_oil and
///   [`SkinBinding::shader_defs`]) declares both bindings, the vertex input struct
///   `wgpu_anim_Vertex` (locations `location..location + 5`, the attributes of
///   [`SkinBinding::vertex_attributes`]), the instance type `wgpu_anim_PageInstance` and
///   `wgpu_anim_skin(instance, joints, weights, position, normal)` (with a tangent,
///   `wgpu_anim_skin_with_tangent`); every name it declares starts with `wgpu_anim_`. Every
///   struct, binding and function of it, with its WGSL signature:
///   [the skinning module's reference](crate::shaders::skinning_module).
///
/// A crowd larger than one page is drawn page by page, with that page's bind group and
/// `instance_index` counting from 0 in each page ([`super::Controller::page_range`]).
///
/// No method panics on what you pass: a bind group entry, a layout or bind groups that do not
/// fit are errors ([`Error::Binding`] when checked on the CPU, [`Error::Refused`] when the device
/// refuses them).
///
/// It gains a field with each feature the module learns to bind, so it is `#[non_exhaustive]`:
/// start from [`SkinBinding::new`], [`SkinBinding::default`], [`SkinBinding::BUILT_IN`] or
/// [`SkinBinding::for_animator`] and set what you need with the `with_*` methods (`const`, for a
/// `const` placement: `SkinBinding::BUILT_IN_DUAL.with_rigid(true)`), or assign the fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SkinBinding {
    /// The bind group index.
    pub group: u32,
    /// The palette's binding; the instances are at `palette + 1`.
    pub palette: u32,
    /// Whether to bind last frame's palettes too (at `palette + 2`), and give the module
    /// `wgpu_anim_previous_position(instance, joints, weights, position)`.
    pub previous: bool,
    /// Whether to bind the dual quaternions too (at `palette + 3`): the module's
    /// `wgpu_anim_skin` then skins each instance as its [`super::Skinning`] says (linear,
    /// dual quaternions or a blend), and `wgpu_anim_skin_blended` takes the amount from you (a
    /// vertex attribute, say). Without it, linear blend skinning only.
    pub dual_quaternion: bool,
    /// With `dual_quaternion`: skip the stretch phase (scale and shear) of dual-quaternion
    /// skinning, for an animator whose library has none
    /// ([`crate::AnimationLibrary::has_scale`] is false): half the bytes read per influence (32
    /// instead of 64) and less arithmetic per vertex. [`SkinBinding::bind_group`] refuses it for
    /// a library that scales, where it would skin wrong. [`SkinBinding::for_animator`] sets it
    /// where it may.
    pub rigid: bool,
    /// Whether to bind morph weights and morph targets too (at `palette + 5` and `palette + 6`;
    /// the animator must keep room for weights, [`super::AnimatorDesc::morph_weights`]): the
    /// module then has `wgpu_anim_morph(instance, vertex_index, position, normal, tangent)`,
    /// which moves a bind-pose vertex by the instance's morph weights, to call before skinning.
    /// Its bind groups are made per page and mesh ([`SkinBinding::morph_bind_group`]).
    pub morph: bool,
    /// Whether to bind the page's list of the instances the frame evaluated (at `palette + 7`;
    /// the animator must cull, [`super::AnimatorDesc::culling`]): the module then has
    /// `wgpu_anim_visible_instance(instance_index)`, the instance a culled draw
    /// ([`SkinBinding::draw_visible`]) draws as its `instance_index`-th, and
    /// `wgpu_anim_update_rate(instance)`, how often the frame's pose of it is evaluated.
    pub visible: bool,
    /// Whether to bind a mesh's vertex animation texture (at `palette + 8`, [`super::GpuVat`]):
    /// the module then has `wgpu_anim_vat(instance, vertex_index)`, the vertex as the instance's
    /// VAT plays it, and with `visible` `wgpu_anim_vat_instance(instance_index)`, the instance a
    /// VAT draw ([`CulledDraws::for_vat`]) draws as its `instance_index`-th. Its bind groups are
    /// made per page and mesh ([`SkinBinding::mesh_bind_groups`]).
    pub vat: bool,
    /// The first shader location of the vertex inputs (`wgpu_anim_Vertex`): position, normal,
    /// uv, joints and weights at `location..location + 5`.
    pub location: u32,
}

impl Default for SkinBinding {
    /// Group 1, bindings 0 and 1 (group 0 is left to the renderer's camera and scene), vertex
    /// inputs at locations 0–4 ([`crate::SkinVertex::LAYOUT`]): `SkinBinding::new(1, 0)`.
    fn default() -> Self {
        Self::new(1, 0)
    }
}

builders!(SkinBinding {
    with_group => group: u32,
    with_palette => palette: u32,
    with_previous => previous: bool,
    with_dual_quaternion => dual_quaternion: bool,
    with_rigid => rigid: bool,
    with_morph => morph: bool,
    with_visible => visible: bool,
    with_vat => vat: bool,
    with_location => location: u32,
});

impl SkinBinding {
    /// Bind group `group`, the palette at binding `palette` (the instances at `palette + 1`),
    /// linear skinning only, nothing else bound, vertex inputs at locations 0–4.
    #[must_use]
    pub const fn new(group: u32, palette: u32) -> Self {
        Self {
            group,
            palette,
            previous: false,
            dual_quaternion: false,
            rigid: false,
            morph: false,
            visible: false,
            vat: false,
            location: 0,
        }
    }

    /// Where the built-in renderer ([`super::SkinnedRenderer`], `shaders/skin.wgsl`) places the
    /// module: group 0 (its camera at binding 0), palettes at 1, instances at 2, vertex inputs
    /// at locations 0–4.
    pub const BUILT_IN: SkinBinding = SkinBinding::new(0, 1);

    /// [`SkinBinding::BUILT_IN`] with the dual quaternions bound (at 4), as the built-in renderer
    /// places the module for an animator that keeps them (and `rigid` where its library has no
    /// scale: [`SkinBinding::for_animator`]).
    pub const BUILT_IN_DUAL: SkinBinding = SkinBinding {
        dual_quaternion: true,
        ..SkinBinding::BUILT_IN
    };

    /// This placement with what `animator` keeps: `dual_quaternion` when it keeps dual
    /// quaternions ([`super::AnimatorDesc::dual_quaternion`]), and then `rigid` when its library
    /// has no scale ([`crate::AnimationLibrary::has_scale`]); `visible` when it culls
    /// ([`super::AnimatorDesc::culling`]); `previous` as it is.
    #[must_use]
    pub fn for_animator(self, animator: &Animator) -> Self {
        let dual_quaternion = animator.controller().dual_quaternion();
        Self {
            dual_quaternion,
            rigid: dual_quaternion && !animator.controller().library().has_scale(),
            visible: animator.controller().culling(),
            ..self
        }
    }

    /// The instances' binding.
    #[must_use]
    pub fn instances(&self) -> u32 {
        // Saturating: a binding past the device's maximum is refused by the device, not a panic.
        self.palette.saturating_add(1)
    }

    /// Last frame's palettes' binding (used when `previous` is set).
    #[must_use]
    pub fn previous_palette(&self) -> u32 {
        self.palette.saturating_add(2)
    }

    /// The dual quaternions' binding (used when `dual_quaternion` is set).
    #[must_use]
    pub fn dual_palette(&self) -> u32 {
        self.palette.saturating_add(3)
    }

    /// Last frame's dual quaternions' binding (used when `previous` and `dual_quaternion` are
    /// set).
    #[must_use]
    pub fn previous_dual_palette(&self) -> u32 {
        self.palette.saturating_add(4)
    }

    /// The morph weights' binding (used when `morph` is set).
    #[must_use]
    pub fn morph_weights(&self) -> u32 {
        self.palette.saturating_add(5)
    }

    /// The morph targets' binding (used when `morph` is set).
    #[must_use]
    pub fn morph_targets(&self) -> u32 {
        self.palette.saturating_add(6)
    }

    /// The binding of the page's list of evaluated instances (used when `visible` is set).
    #[must_use]
    pub fn visible_list(&self) -> u32 {
        self.palette.saturating_add(7)
    }

    /// The binding of the vertex animation texture (with `vat`): `palette + 8`.
    #[must_use]
    pub fn vat_binding(&self) -> u32 {
        self.palette.saturating_add(8)
    }

    /// The vertex attributes of a [`crate::SkinVertex`] buffer at the module's locations
    /// (`location..location + 5`; [`crate::SkinVertex::attributes`]).
    #[must_use]
    pub const fn vertex_attributes(&self) -> [wgpu::VertexAttribute; 5] {
        crate::SkinVertex::attributes(self.location)
    }

    /// The bind group layout entries (read-only storage, vertex stage; two, one more for each of
    /// `previous` and `dual_quaternion`, and one more for both), to add to a bind group layout of
    /// your own or use alone ([`SkinBinding::bind_group_layout`]).
    #[must_use]
    pub fn layout_entries(&self) -> Vec<wgpu::BindGroupLayoutEntry> {
        let storage = |binding| super::wgpu_util::storage_entry(binding, wgpu::ShaderStages::VERTEX, true, 0);
        self.bindings().into_iter().map(storage).collect()
    }

    /// A bind group layout with only these entries.
    ///
    /// Errors: a layout the device refuses ([`crate::Error::Refused`]), for example bindings past
    /// its `max_bindings_per_bind_group`. Natively the device answers at once. In a browser this
    /// call does not wait for its answer (it may be made between frames), so a refusal reaches the
    /// device's uncaptured-error handler; to have it as an error, make the layout inside
    /// [`super::scoped`] and `.await` that.
    pub fn bind_group_layout(&self, device: &wgpu::Device) -> crate::Result<wgpu::BindGroupLayout> {
        super::refusable_now(
            device,
            || {
                format!(
                    "the skinning bind group layout (group {}, binding {})",
                    self.group, self.palette
                )
            },
            || {
                device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                    label: Some("wgpu-anim skinning"),
                    entries: &self.layout_entries(),
                })
            },
        )
    }

    /// The bind group of `animator`'s page `page` for `layout` (made with
    /// [`SkinBinding::bind_group_layout`], or a layout of yours with [`SkinBinding::layout_entries`]
    /// and more, or the one a pipeline derived from your shader); `extra` are your own entries in
    /// the same group (a camera, say), added before the skinning ones.
    ///
    /// Errors ([`Error::Binding`], checked before anything is created): no page `page`; `previous`
    /// set and the animator keeps no previous palettes; a skinning binding past the device's
    /// `max_bindings_per_bind_group`; `dual_quaternion` set and the animator keeps no dual
    /// quaternions; `rigid` set with a library that has scale; an `extra` entry at a skinning
    /// binding or at the binding of another `extra` entry; an `extra` buffer without `UNIFORM` or
    /// `STORAGE` usage, or a range past its end. What only the device can check — `layout` not having these entries, or of
    /// other types, visibility or sizes — is [`Error::Refused`] naming the page, with wgpu's
    /// reason. In a browser, as for [`SkinBinding::bind_group_layout`], only inside
    /// [`super::scoped`] (`.await`ed): made between frames too, this call does not wait.
    pub fn bind_group(
        &self,
        device: &wgpu::Device,
        layout: &wgpu::BindGroupLayout,
        animator: &Animator,
        page: usize,
        extra: &[wgpu::BindGroupEntry<'_>],
    ) -> Result<wgpu::BindGroup> {
        self.mesh_bind_group(device, layout, animator, page, MeshData::default(), extra)
    }

    /// As [`SkinBinding::bind_group`], for a placement with `morph`: the page's morph weights
    /// and `targets`, the morph targets of the mesh drawn with it. Errors: as
    /// [`SkinBinding::bind_group`]; `morph` not set, or the animator keeps no morph weights.
    pub fn morph_bind_group(
        &self,
        device: &wgpu::Device,
        layout: &wgpu::BindGroupLayout,
        animator: &Animator,
        page: usize,
        targets: &super::GpuMorphTargets,
        extra: &[wgpu::BindGroupEntry<'_>],
    ) -> Result<wgpu::BindGroup> {
        self.mesh_bind_group(device, layout, animator, page, MeshData::morphing(targets), extra)
    }

    /// [`SkinBinding::mesh_bind_group`] for every page of `animator`, in page order.
    ///
    /// Errors: as [`SkinBinding::mesh_bind_group`], for the first page that fails.
    pub fn mesh_bind_groups(
        &self,
        device: &wgpu::Device,
        layout: &wgpu::BindGroupLayout,
        animator: &Animator,
        mesh: MeshData<'_>,
        extra: &[wgpu::BindGroupEntry<'_>],
    ) -> Result<Vec<wgpu::BindGroup>> {
        (0..animator.controller().page_count())
            .map(|page| self.mesh_bind_group(device, layout, animator, page, mesh, extra))
            .collect()
    }

    /// [`SkinBinding::morph_bind_group`] for every page of `animator`, in page order.
    ///
    /// Errors: as [`SkinBinding::morph_bind_group`], for the first page that fails.
    pub fn morph_bind_groups(
        &self,
        device: &wgpu::Device,
        layout: &wgpu::BindGroupLayout,
        animator: &Animator,
        targets: &super::GpuMorphTargets,
        extra: &[wgpu::BindGroupEntry<'_>],
    ) -> Result<Vec<wgpu::BindGroup>> {
        self.mesh_bind_groups(device, layout, animator, MeshData::morphing(targets), extra)
    }

    /// As [`SkinBinding::bind_group`], with what a mesh brings: its morph targets (with `morph`)
    /// and its vertex animation texture (with `vat`).
    ///
    /// Errors: as [`SkinBinding::bind_group`] and [`SkinBinding::morph_bind_group`]; `vat` set and
    /// no VAT given, or a VAT given and `vat` not set.
    pub fn mesh_bind_group(
        &self,
        device: &wgpu::Device,
        layout: &wgpu::BindGroupLayout,
        animator: &Animator,
        page: usize,
        mesh: MeshData<'_>,
        extra: &[wgpu::BindGroupEntry<'_>],
    ) -> Result<wgpu::BindGroup> {
        let targets = mesh.morph_targets;
        let what = || {
            format!(
                "the skinning bind group of page {page} (group {}, palette binding {})",
                self.group, self.palette
            )
        };
        let mistake = |reason: String| Error::Binding { what: what(), reason };
        let pages = animator.controller().page_count();
        let (Some(palette), Some(instances)) =
            (animator.page_palette_buffer(page), animator.page_instance_buffer(page))
        else {
            return Err(mistake(format!("the animator has {pages} pages, no page {page}")));
        };
        let previous = match animator.page_previous_palette_buffer(page) {
            None if self.previous => {
                return Err(mistake(
                    "`previous` is set and the animator keeps no previous palettes \
                     (Animator::keep_previous_palettes)"
                        .to_owned(),
                ));
            }
            kept => kept.filter(|_| self.previous),
        };
        let dual = match animator.page_dual_palette_buffer(page) {
            None if self.dual_quaternion => {
                return Err(mistake(
                    "`dual_quaternion` is set and the animator keeps no dual quaternions \
                     (AnimatorDesc::dual_quaternion)"
                        .to_owned(),
                ));
            }
            kept => kept.filter(|_| self.dual_quaternion),
        };
        if self.dual_quaternion && self.rigid && animator.controller().library().has_scale() {
            return Err(mistake(
                "`rigid` is set and the animator's library scales or shears a joint \
                 (AnimationLibrary::has_scale): dual quaternions need their stretch phase"
                    .to_owned(),
            ));
        }
        let morph = match (self.morph, targets, animator.page_morph_weight_buffer(page)) {
            (false, None, _) => None,
            (false, Some(_), _) => {
                return Err(mistake("morph targets given, and `morph` is not set".to_owned()));
            }
            (true, None, _) => {
                return Err(mistake(
                    "`morph` is set: the bind group needs the mesh's morph targets (SkinBinding::morph_bind_group)"
                        .to_owned(),
                ));
            }
            (true, Some(_), None) => {
                return Err(mistake(
                    "`morph` is set and the animator keeps no morph weights (AnimatorDesc::morph_weights)".to_owned(),
                ));
            }
            (true, Some(t), Some(w)) => Some((w, t)),
        };
        if self.visible && !animator.controller().culling() {
            return Err(mistake(
                "`visible` is set and the animator does not cull (AnimatorDesc::culling)".to_owned(),
            ));
        }
        let vat = match (self.vat, mesh.vat) {
            (true, None) => {
                return Err(mistake(
                    "`vat` is set: the bind group needs the mesh's VAT (SkinBinding::mesh_bind_group)".to_owned(),
                ));
            }
            (false, Some(_)) => return Err(mistake("a VAT given, and `vat` is not set".to_owned())),
            (_, vat) => vat,
        };
        self.check_entries(device, extra).map_err(mistake)?;
        let mut entries = extra.to_vec();
        if let Some((weights, targets)) = morph {
            entries.push(wgpu::BindGroupEntry {
                binding: self.morph_weights(),
                resource: wgpu::BindingResource::Buffer(weights),
            });
            entries.push(wgpu::BindGroupEntry {
                binding: self.morph_targets(),
                resource: targets.buffer().as_entire_binding(),
            });
        }
        entries.push(wgpu::BindGroupEntry {
            binding: self.palette,
            resource: palette.as_entire_binding(),
        });
        entries.push(wgpu::BindGroupEntry {
            binding: self.instances(),
            resource: instances.as_entire_binding(),
        });
        if let Some(previous) = previous {
            entries.push(wgpu::BindGroupEntry {
                binding: self.previous_palette(),
                resource: previous.as_entire_binding(),
            });
        }
        if let Some(dual) = dual {
            entries.push(wgpu::BindGroupEntry {
                binding: self.dual_palette(),
                resource: wgpu::BindingResource::Buffer(dual),
            });
        }
        if self.visible {
            let list = animator
                .page_visible_buffer(page)
                .ok_or_else(|| mistake(format!("the animator has no page {page}")))?;
            entries.push(wgpu::BindGroupEntry {
                binding: self.visible_list(),
                resource: list.as_entire_binding(),
            });
        }
        if let Some(vat) = vat {
            entries.push(wgpu::BindGroupEntry {
                binding: self.vat_binding(),
                resource: vat.buffer().as_entire_binding(),
            });
        }
        if self.previous && self.dual_quaternion {
            // Kept with the previous palettes whenever the animator keeps dual quaternions.
            let previous_dual = animator.page_previous_dual_palette_buffer(page).ok_or_else(|| {
                mistake("the animator keeps no previous dual quaternions (Animator::keep_previous_palettes)".to_owned())
            })?;
            entries.push(wgpu::BindGroupEntry {
                binding: self.previous_dual_palette(),
                resource: previous_dual.as_entire_binding(),
            });
        }
        super::refusable_now(device, what, || {
            device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("wgpu-anim skinning"),
                layout,
                entries: &entries,
            })
        })
    }

    /// What the CPU can check of the skinning bindings and of `extra` before a bind group is
    /// made: the bindings within the device's limit, no binding twice, `extra` buffers bindable
    /// and their ranges within them.
    fn check_entries(
        &self,
        device: &wgpu::Device,
        extra: &[wgpu::BindGroupEntry<'_>],
    ) -> std::result::Result<(), String> {
        let ours = self.bindings();
        let max = device.limits().max_bindings_per_bind_group;
        if let Some(b) = ours.iter().find(|&&b| b >= max) {
            return Err(format!(
                "skinning binding {b} is past the device's max_bindings_per_bind_group ({max})"
            ));
        }
        for (k, entry) in extra.iter().enumerate() {
            let b = entry.binding;
            if ours.contains(&b) {
                return Err(format!(
                    "extra entry {k} is at binding {b}, which is a skinning binding {ours:?}"
                ));
            }
            if extra[..k].iter().any(|e| e.binding == b) {
                return Err(format!(
                    "extra entry {k} is at binding {b}, as an extra entry before it"
                ));
            }
            if let wgpu::BindingResource::Buffer(buffer) = &entry.resource {
                let (usage, len) = (buffer.buffer.usage(), buffer.buffer.size());
                if !usage.intersects(wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::STORAGE) {
                    return Err(format!(
                        "extra entry {k} (binding {b}) binds a buffer of usage {usage:?}, neither UNIFORM nor STORAGE"
                    ));
                }
                let end = buffer
                    .size
                    .map_or(Some(len), |size| buffer.offset.checked_add(size.get()));
                if buffer.offset >= len || end.is_none_or(|end| end > len) {
                    return Err(format!(
                        "extra entry {k} (binding {b}) binds bytes {}..{} of a buffer of {len} bytes",
                        buffer.offset,
                        end.map_or("past u64::MAX".to_owned(), |e| e.to_string())
                    ));
                }
            }
        }
        Ok(())
    }

    /// The skinning bindings: the palette, the instances, with `previous` last frame's
    /// palettes, with `dual_quaternion` the dual quaternions, with both last frame's dual
    /// quaternions.
    fn bindings(&self) -> Vec<u32> {
        let mut out = vec![self.palette, self.instances()];
        if self.previous {
            out.push(self.previous_palette());
        }
        if self.dual_quaternion {
            out.push(self.dual_palette());
        }
        if self.previous && self.dual_quaternion {
            out.push(self.previous_dual_palette());
        }
        if self.morph {
            out.push(self.morph_weights());
            out.push(self.morph_targets());
        }
        if self.visible {
            out.push(self.visible_list());
        }
        if self.vat {
            out.push(self.vat_binding());
        }
        out
    }

    /// The bind groups of all of `animator`'s pages, in page order (see
    /// [`SkinBinding::bind_group`]).
    ///
    /// Errors: as [`SkinBinding::bind_group`], for the first page that fails.
    pub fn bind_groups(
        &self,
        device: &wgpu::Device,
        layout: &wgpu::BindGroupLayout,
        animator: &Animator,
        extra: &[wgpu::BindGroupEntry<'_>],
    ) -> Result<Vec<wgpu::BindGroup>> {
        (0..animator.controller().page_count())
            .map(|page| self.bind_group(device, layout, animator, page, extra))
            .collect()
    }

    /// Draws `animator`'s instances `instances` (global indices, all of `mesh`'s skeleton) with
    /// the pipeline set on `pass`: one instanced draw per page they span, with that page's bind
    /// group (`bind_groups`, from [`SkinBinding::bind_groups`], one per page in page order) at
    /// this group; `instance_index` counts from 0 in each page. It sets `mesh`'s vertex buffer at
    /// slot 0 and its index buffer. Pages past the end of `bind_groups` are not drawn.
    ///
    /// Errors (nothing recorded): more bind groups than `animator` has pages (bind groups of
    /// another animator, or of this one before a rebuild; [`Error::Binding`]); before the
    /// animator's first [`Animator::prepare`] ([`Error::NotPrepared`]); an instance in
    /// `instances` added after the last `prepare` ([`Error::NotUploaded`]), or of another
    /// skeleton than `mesh`'s ([`Error::MeshSkeleton`], naming the first).
    /// A bind group whose layout is not the pipeline's is reported by wgpu when the encoder
    /// finishes, not here: render passes check their commands then.
    pub fn draw(
        &self,
        pass: &mut wgpu::RenderPass<'_>,
        bind_groups: &[wgpu::BindGroup],
        animator: &Animator,
        mesh: &super::MeshBuffers,
        instances: std::ops::Range<u32>,
    ) -> Result<()> {
        if bind_groups.len() > animator.controller().page_count() {
            return Err(Error::Binding {
                what: format!("the skinned draw of instances {instances:?} (group {})", self.group),
                reason: format!(
                    "{} bind groups for an animator of {} pages",
                    bind_groups.len(),
                    animator.controller().page_count()
                ),
            });
        }
        animator.check_drawable(instances.start as usize..instances.end as usize, || {
            format!("SkinBinding::draw of instances {instances:?}")
        })?;
        mesh.check_instances(animator, instances.start as usize..instances.end as usize)?;
        let pages = bind_groups.iter().enumerate().map(|(page, group)| {
            let r = animator.controller().page_range(page);
            (r.start as u32..r.end as u32, group)
        });
        draw_pages(pass, self.group, pages, mesh, instances);
        Ok(())
    }

    /// Draws every instance `animator` evaluated this frame (culling, [`super::AnimatorDesc::culling`])
    /// with the pipeline set on `pass`: one indirect instanced draw of `mesh` per page, with that
    /// page's bind group (from [`SkinBinding::bind_groups`] with `visible` set) at this group, whose
    /// instance count `draws` holds ([`CulledDraws::encode`] this frame first). The shader draws
    /// `wgpu_anim_visible_instance(instance_index)`. Every instance of the animator must use
    /// `mesh` (a page's list holds all it evaluated): for several meshes, an animator each.
    ///
    /// Errors (nothing recorded): `visible` not set; more bind groups than `animator` has pages,
    /// or `draws` made for another number of pages or for a mesh of another index count
    /// ([`Error::Binding`]); before the animator's first [`Animator::prepare`]
    /// ([`Error::NotPrepared`]); an instance of the animator of another skeleton than `mesh`'s
    /// ([`Error::MeshSkeleton`], naming the first).
    pub fn draw_visible(
        &self,
        pass: &mut wgpu::RenderPass<'_>,
        bind_groups: &[wgpu::BindGroup],
        animator: &Animator,
        mesh: &super::MeshBuffers,
        draws: &CulledDraws,
    ) -> Result<()> {
        let mistake = |reason: String| Error::Binding {
            what: format!("the culled skinned draw (group {})", self.group),
            reason,
        };
        if !self.visible {
            return Err(mistake(
                "`visible` is not set: the shader draws instances by their index".into(),
            ));
        }
        let pages = animator.controller().page_count();
        if bind_groups.len() > pages || draws.pages != pages {
            return Err(mistake(format!(
                "{} bind groups and draws for {} pages, for an animator of {pages} pages",
                bind_groups.len(),
                draws.pages,
            )));
        }
        if draws.index_count != mesh.index_count {
            return Err(mistake(format!(
                "the draws were made for a mesh of {} indices, and mesh '{}' has {}",
                draws.index_count,
                mesh.name(),
                mesh.index_count
            )));
        }
        animator.check_prepared(|| "SkinBinding::draw_visible".to_owned())?;
        mesh.check_instances(animator, 0..animator.controller().instance_count())?;
        draws.draw(pass, self.group, bind_groups, mesh);
        Ok(())
    }

    /// The skinning module as plain WGSL, with this group and these bindings: append it to your
    /// shader's source.
    #[must_use]
    pub fn wgsl(&self) -> String {
        // The module's conditional blocks are `#ifdef NAME` .. (`#else` ..) `#endif`, nested, on
        // WGPU_ANIM_PREVIOUS_PALETTE, WGPU_ANIM_DUAL_QUATERNION, WGPU_ANIM_DUAL_RIGID and
        // WGPU_ANIM_MORPH.
        let mut out = String::with_capacity(SKINNING_MODULE.len());
        let mut keep = true;
        // Per open block: whether the lines around it are kept, and whether its define is on.
        let mut blocks: Vec<(bool, bool)> = Vec::new();
        for line in SKINNING_MODULE.lines() {
            match line.trim() {
                l if l.starts_with("#ifdef ") => {
                    let on = match &l["#ifdef ".len()..] {
                        "WGPU_ANIM_PREVIOUS_PALETTE" => self.previous,
                        "WGPU_ANIM_DUAL_QUATERNION" => self.dual_quaternion,
                        "WGPU_ANIM_DUAL_RIGID" => self.dual_quaternion && self.rigid,
                        "WGPU_ANIM_MORPH" => self.morph,
                        "WGPU_ANIM_VISIBLE" => self.visible,
                        "WGPU_ANIM_VAT" => self.vat,
                        _ => false,
                    };
                    blocks.push((keep, on));
                    keep = keep && on;
                }
                "#else" => {
                    if let Some(&(outer, on)) = blocks.last() {
                        keep = outer && !on;
                    }
                }
                "#endif" => keep = blocks.pop().is_none_or(|(outer, _)| outer),
                l if l.starts_with("#define_import_path") => {}
                _ if keep => {
                    out.push_str(line);
                    out.push('\n');
                }
                _ => {}
            }
        }
        for (name, value) in self.defs() {
            out = out.replace(&format!("#{{{name}}}"), &value.to_string());
        }
        out
    }

    /// The shader defs that place [`SKINNING_MODULE`] at this group and these bindings when it
    /// is composed with naga_oil (a `HashMap<String, ShaderDefValue>` once collected, as
    /// naga_oil's descriptors take them).
    #[must_use]
    pub fn shader_defs(&self) -> Vec<(String, naga_oil::compose::ShaderDefValue)> {
        self.stage_defs()
            .into_iter()
            .map(|(name, value)| (name.to_owned(), value))
            .collect()
    }

    /// The same defs as [`crate::shaders::ShaderDef`]s, for the crate's shader registry: the
    /// built-in renderer's shader is `shaders::stage_source_with(Stage::Skin,
    /// &SkinBinding::BUILT_IN.stage_defs())`.
    #[must_use]
    pub fn stage_defs(&self) -> Vec<ShaderDef> {
        use naga_oil::compose::ShaderDefValue;
        let mut defs: Vec<ShaderDef> = self
            .defs()
            .into_iter()
            .map(|(name, value)| (name, ShaderDefValue::UInt(value)))
            .collect();
        if self.previous {
            defs.push(("WGPU_ANIM_PREVIOUS_PALETTE", ShaderDefValue::Bool(true)));
        }
        if self.dual_quaternion {
            defs.push(("WGPU_ANIM_DUAL_QUATERNION", ShaderDefValue::Bool(true)));
            if self.rigid {
                defs.push(("WGPU_ANIM_DUAL_RIGID", ShaderDefValue::Bool(true)));
            }
        }
        if self.morph {
            defs.push(("WGPU_ANIM_MORPH", ShaderDefValue::Bool(true)));
        }
        if self.visible {
            defs.push(("WGPU_ANIM_VISIBLE", ShaderDefValue::Bool(true)));
        }
        if self.vat {
            defs.push(("WGPU_ANIM_VAT", ShaderDefValue::Bool(true)));
        }
        defs
    }

    /// The placement defines ([`SKIN_PLACEMENT_DEFS`]) with their values.
    fn defs(&self) -> [(&'static str, u32); 11] {
        let [
            location,
            group,
            palette,
            instances,
            previous,
            dual,
            previous_dual,
            weights,
            targets,
            visible,
            vat,
        ] = SKIN_PLACEMENT_DEFS;
        [
            (location, self.location),
            (group, self.group),
            (palette, self.palette),
            (instances, self.instances()),
            (previous, self.previous_palette()),
            (dual, self.dual_palette()),
            (previous_dual, self.previous_dual_palette()),
            (weights, self.morph_weights()),
            (targets, self.morph_targets()),
            (visible, self.visible_list()),
            (vat, self.vat_binding()),
        ]
    }
}

/// One instanced draw of `mesh` per page of `pages` (its global instance range and bind group)
/// that `instances` overlaps, the bind group set at `group`.
pub(crate) fn draw_pages<'g>(
    pass: &mut wgpu::RenderPass<'_>,
    group: u32,
    pages: impl Iterator<Item = (std::ops::Range<u32>, &'g wgpu::BindGroup)>,
    mesh: &super::MeshBuffers,
    instances: std::ops::Range<u32>,
) {
    mesh.bind(pass, 0);
    for (range, bind_group) in pages {
        let (start, end) = (instances.start.max(range.start), instances.end.min(range.end));
        if start < end {
            pass.set_bind_group(group, bind_group, &[]);
            pass.draw_indexed(0..mesh.index_count, 0, start - range.start..end - range.start);
        }
    }
}

/// What a mesh brings to its skinning bind groups ([`SkinBinding::mesh_bind_group`]): its morph
/// targets (for a placement with `morph`) and its vertex animation texture (with `vat`).
///
/// It gains a field with each kind of mesh data the module binds, so it is `#[non_exhaustive]`:
/// start from [`MeshData::default`] (nothing) and add with [`MeshData::with_morph_targets`] and
/// [`MeshData::with_vat`].
#[derive(Clone, Copy, Debug, Default)]
#[non_exhaustive]
pub struct MeshData<'a> {
    /// The mesh's morph targets.
    pub morph_targets: Option<&'a super::GpuMorphTargets>,
    /// The mesh's vertex animation texture.
    pub vat: Option<&'a super::GpuVat>,
}

impl<'a> MeshData<'a> {
    fn morphing(targets: &'a super::GpuMorphTargets) -> Self {
        Self::default().with_morph_targets(targets)
    }

    /// This with the mesh's morph targets.
    #[must_use]
    pub const fn with_morph_targets(mut self, targets: &'a super::GpuMorphTargets) -> Self {
        self.morph_targets = Some(targets);
        self
    }

    /// This with the mesh's vertex animation texture.
    #[must_use]
    pub const fn with_vat(mut self, vat: &'a super::GpuVat) -> Self {
        self.vat = Some(vat);
        self
    }
}
