//! [`SkinBinding`]: what a vertex shader of your own needs to skin an animator's characters — a
//! bind group layout, a bind group per page and a WGSL module — at a group and bindings you choose.

use super::Animator;
use crate::shaders::SKINNING_MODULE;

/// Where your vertex shader finds an animator's palette and instances: bind group `group`, the
/// palette at binding `palette`, the instances at `palette + 1` and, with `previous`, last
/// frame's palettes at `palette + 2` (for motion vectors; the animator must keep them,
/// [`Animator::keep_previous_palettes`]), visible to the vertex stage; and the mesh's vertex
/// inputs from shader location `location` on.
///
/// - The palette is an array of 3×4 row-major affine matrices (`math::Affine`: rows `x`, `y`, `z`,
///   48 bytes each); instance `i` of a page has its joints at `joint_offset` (the WGSL module's
///   `wgpu_anim_instances[i].joint_offset`, also `animator.instances()[i].joint_offset`).
/// - The instances are the page's `layout::GpuInstance`s, 256 bytes each; drawing reads the
///   palette offset, the world transform and the tint.
/// - The WGSL module ([`SkinBinding::wgsl`], or [`SKINNING_MODULE`] with naga_oil and
///   [`SkinBinding::shader_defs`]) declares both bindings, the vertex input struct
///   `wgpu_anim_Vertex` (locations `location..location + 5`, the attributes of
///   [`SkinBinding::vertex_attributes`]) and `wgpu_anim_skin(instance, joints, weights, position,
///   normal, tangent)`; every name it declares starts with `wgpu_anim_`.
///
/// A crowd larger than one page is drawn page by page, with that page's bind group and
/// `instance_index` counting from 0 in each page ([`super::Controller::page_range`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SkinBinding {
    /// The bind group index.
    pub group: u32,
    /// The palette's binding; the instances are at `palette + 1`.
    pub palette: u32,
    /// Whether to bind last frame's palettes too (at `palette + 2`), and give the module
    /// `wgpu_anim_previous_position(instance, joints, weights, position)`.
    pub previous: bool,
    /// The first shader location of the vertex inputs (`wgpu_anim_Vertex`): position, normal,
    /// uv, joints and weights at `location..location + 5`.
    pub location: u32,
}

impl Default for SkinBinding {
    /// Group 1, bindings 0 and 1 (group 0 is left to the renderer's camera and scene), vertex
    /// inputs at locations 0–4 ([`crate::SkinVertex::LAYOUT`]).
    fn default() -> Self {
        Self {
            group: 1,
            palette: 0,
            previous: false,
            location: 0,
        }
    }
}

impl SkinBinding {
    /// Where the built-in renderer ([`super::SkinnedRenderer`], `shaders/skin.wgsl`) places the
    /// module: group 0 (its camera at binding 0), palettes at 1, instances at 2, vertex inputs
    /// at locations 0–4.
    pub const BUILT_IN: SkinBinding = SkinBinding {
        group: 0,
        palette: 1,
        previous: false,
        location: 0,
    };

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

    /// The vertex attributes of a [`crate::SkinVertex`] buffer at the module's locations
    /// (`location..location + 5`; [`crate::SkinVertex::attributes`]).
    #[must_use]
    pub const fn vertex_attributes(&self) -> [wgpu::VertexAttribute; 5] {
        crate::SkinVertex::attributes(self.location)
    }

    /// The bind group layout entries (read-only storage, vertex stage; two, or three with
    /// `previous`), to add to a bind group layout of your own or use alone
    /// ([`SkinBinding::bind_group_layout`]).
    #[must_use]
    pub fn layout_entries(&self) -> Vec<wgpu::BindGroupLayoutEntry> {
        let storage = |binding| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::VERTEX,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Storage { read_only: true },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        };
        let mut entries = vec![storage(self.palette), storage(self.instances())];
        if self.previous {
            entries.push(storage(self.previous_palette()));
        }
        entries
    }

    /// A bind group layout with only these entries.
    ///
    /// Errors: a layout the device refuses ([`crate::Error::Refused`]), for example bindings past
    /// its `max_bindings_per_bind_group`.
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
    /// and more); `extra` are your own entries in the same group (a camera, say), added before
    /// the skinning ones. `None` if there is no such page, or if `previous` is set and the
    /// animator does not keep previous palettes.
    #[must_use]
    pub fn bind_group(
        &self,
        device: &wgpu::Device,
        layout: &wgpu::BindGroupLayout,
        animator: &Animator,
        page: usize,
        extra: &[wgpu::BindGroupEntry<'_>],
    ) -> Option<wgpu::BindGroup> {
        let mut entries = extra.to_vec();
        entries.extend([
            wgpu::BindGroupEntry {
                binding: self.palette,
                resource: animator.page_palette_buffer(page)?.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: self.instances(),
                resource: animator.page_instance_buffer(page)?.as_entire_binding(),
            },
        ]);
        if self.previous {
            entries.push(wgpu::BindGroupEntry {
                binding: self.previous_palette(),
                resource: animator.page_previous_palette_buffer(page)?.as_entire_binding(),
            });
        }
        Some(device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("wgpu-anim skinning"),
            layout,
            entries: &entries,
        }))
    }

    /// The bind groups of all of `animator`'s pages, in page order (see
    /// [`SkinBinding::bind_group`]); `None` if `previous` is set and the animator does not keep
    /// previous palettes.
    #[must_use]
    pub fn bind_groups(
        &self,
        device: &wgpu::Device,
        layout: &wgpu::BindGroupLayout,
        animator: &Animator,
        extra: &[wgpu::BindGroupEntry<'_>],
    ) -> Option<Vec<wgpu::BindGroup>> {
        (0..animator.page_count())
            .map(|page| self.bind_group(device, layout, animator, page, extra))
            .collect()
    }

    /// Draws `animator`'s instances `instances` (global indices, all of `mesh`'s skeleton) with
    /// the pipeline set on `pass`: one instanced draw per page they span, with that page's bind
    /// group (`bind_groups`, from [`SkinBinding::bind_groups`], one per page in page order) at
    /// this group; `instance_index` counts from 0 in each page. It sets `mesh`'s vertex buffer at
    /// slot 0 and its index buffer. Pages past the end of `bind_groups` are not drawn.
    pub fn draw(
        &self,
        pass: &mut wgpu::RenderPass<'_>,
        bind_groups: &[wgpu::BindGroup],
        animator: &Animator,
        mesh: &super::MeshBuffers,
        instances: std::ops::Range<u32>,
    ) {
        let pages = bind_groups.iter().enumerate().map(|(page, group)| {
            let r = animator.page_range(page);
            (r.start as u32..r.end as u32, group)
        });
        draw_pages(pass, self.group, pages, mesh, instances);
    }

    /// The skinning module as plain WGSL, with this group and these bindings: append it to your
    /// shader's source.
    #[must_use]
    pub fn wgsl(&self) -> String {
        // The module's only conditional block is `#ifdef WGPU_ANIM_PREVIOUS_PALETTE` .. `#endif`.
        let mut out = String::with_capacity(SKINNING_MODULE.len());
        let mut keep = true;
        for line in SKINNING_MODULE.lines() {
            match line.trim() {
                "#ifdef WGPU_ANIM_PREVIOUS_PALETTE" => keep = self.previous,
                "#endif" => keep = true,
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
    /// is composed with naga_oil.
    #[must_use]
    pub fn shader_defs(&self) -> Vec<(String, naga_oil::compose::ShaderDefValue)> {
        use naga_oil::compose::ShaderDefValue;
        let mut defs: Vec<(String, ShaderDefValue)> = self
            .defs()
            .into_iter()
            .map(|(name, value)| (name.to_owned(), ShaderDefValue::UInt(value)))
            .collect();
        if self.previous {
            defs.push(("WGPU_ANIM_PREVIOUS_PALETTE".to_owned(), ShaderDefValue::Bool(true)));
        }
        defs
    }

    fn defs(&self) -> [(&'static str, u32); 5] {
        [
            ("WGPU_ANIM_VERTEX_LOCATION", self.location),
            ("WGPU_ANIM_SKIN_GROUP", self.group),
            ("WGPU_ANIM_PALETTE_BINDING", self.palette),
            ("WGPU_ANIM_INSTANCE_BINDING", self.instances()),
            ("WGPU_ANIM_PREVIOUS_BINDING", self.previous_palette()),
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
