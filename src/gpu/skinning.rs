//! [`SkinBinding`]: what a vertex shader of your own needs to skin an animator's characters — a
//! bind group layout, a bind group per page and a WGSL module — at a group and bindings you choose.

use super::Animator;
use crate::shaders::SKINNING_MODULE;

/// Where your vertex shader finds an animator's palette and instances: bind group `group`, the
/// palette at binding `palette` and the instances at `palette + 1`, visible to the vertex stage.
///
/// - The palette is an array of 3×4 row-major affine matrices (`math::Affine`: rows `x`, `y`, `z`,
///   48 bytes each); instance `i` of a page has its joints at `joint_offset` (the WGSL module's
///   `wgpu_anim_instances[i].joint_offset`, also `animator.instances()[i].joint_offset`).
/// - The instances are the page's `layout::GpuInstance`s, 256 bytes each; drawing reads the
///   palette offset, the world transform and the tint.
/// - The WGSL module ([`SkinBinding::wgsl`], or [`SKINNING_MODULE`] with naga_oil and
///   [`SkinBinding::shader_defs`]) declares both bindings and `wgpu_anim_skin(instance, joints,
///   weights, position, normal, tangent)`; every name it declares starts with `wgpu_anim_`.
///
/// A crowd larger than one page is drawn page by page, with that page's bind group and
/// `instance_index` counting from 0 in each page ([`super::Controller::page_range`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SkinBinding {
    /// The bind group index.
    pub group: u32,
    /// The palette's binding; the instances are at `palette + 1`.
    pub palette: u32,
}

impl Default for SkinBinding {
    /// Group 1, bindings 0 and 1 (group 0 is left to the renderer's camera and scene).
    fn default() -> Self {
        Self { group: 1, palette: 0 }
    }
}

impl SkinBinding {
    /// The instances' binding.
    #[must_use]
    pub fn instances(&self) -> u32 {
        self.palette + 1
    }

    /// The two bind group layout entries (read-only storage, vertex stage), to add to a bind
    /// group layout of your own or use alone ([`SkinBinding::bind_group_layout`]).
    #[must_use]
    pub fn layout_entries(&self) -> [wgpu::BindGroupLayoutEntry; 2] {
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
        [storage(self.palette), storage(self.instances())]
    }

    /// A bind group layout with only the two entries.
    #[must_use]
    pub fn bind_group_layout(&self, device: &wgpu::Device) -> wgpu::BindGroupLayout {
        device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("wgpu-anim skinning"),
            entries: &self.layout_entries(),
        })
    }

    /// The bind group of `animator`'s page `page` for `layout` (made with
    /// [`SkinBinding::bind_group_layout`]); `None` if there is no such page.
    #[must_use]
    pub fn bind_group(
        &self,
        device: &wgpu::Device,
        layout: &wgpu::BindGroupLayout,
        animator: &Animator,
        page: usize,
    ) -> Option<wgpu::BindGroup> {
        Some(device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("wgpu-anim skinning"),
            layout,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: self.palette,
                    resource: animator.page_palette_buffer(page)?.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: self.instances(),
                    resource: animator.page_instance_buffer(page)?.as_entire_binding(),
                },
            ],
        }))
    }

    /// The skinning module as plain WGSL, with this group and these bindings: append it to your
    /// shader's source.
    #[must_use]
    pub fn wgsl(&self) -> String {
        let mut out = String::with_capacity(SKINNING_MODULE.len());
        for line in SKINNING_MODULE
            .lines()
            .filter(|l| !l.starts_with("#define_import_path"))
        {
            out.push_str(line);
            out.push('\n');
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
        self.defs()
            .into_iter()
            .map(|(name, value)| (name.to_owned(), naga_oil::compose::ShaderDefValue::UInt(value)))
            .collect()
    }

    fn defs(&self) -> [(&'static str, u32); 3] {
        [
            ("WGPU_ANIM_SKIN_GROUP", self.group),
            ("WGPU_ANIM_PALETTE_BINDING", self.palette),
            ("WGPU_ANIM_INSTANCE_BINDING", self.instances()),
        ]
    }
}
