//! What the built-in renderers read of the view: the camera and light of the skinned, prop,
//! ground and footprint renderers, and the skinned renderer's uniform around it (WGSL `Camera`
//! and `SkinView`, declared from these).

use glam::{Mat4, UVec4, Vec3, Vec4};

wgsl_struct! {
    /// Camera and light for the built-in renderers ([`crate::gpu::SkinnedRenderer`],
    /// [`crate::gpu::PropRenderer`], and with feature `scene` the ground and the footprints).
    /// WGSL `Camera`, whose declaration is made from this one: the types module's
    /// ([`super::generated`]), which the skinned renderer's shader imports; the ground's, the
    /// props' and the footprints' shaders have it prepended ([`super::WgslStruct::declaration`]).
    #[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
    pub struct Camera as "Camera" {
        /// `clip_from_world`.
        pub view_proj: Mat4,
        /// Eye position (xyz, w unused).
        pub eye: Vec4,
        /// Direction the light travels (xyz, w unused).
        pub light_dir: Vec4,
    }
}

impl Camera {
    /// A perspective camera at `eye` looking at `target` (y up), with a default light.
    #[must_use]
    pub fn look_at(eye: Vec3, target: Vec3, fov_y_radians: f32, aspect: f32, near: f32, far: f32) -> Self {
        let view = glam::camera::rh::view::look_at_mat4(eye, target, Vec3::Y);
        let proj = glam::camera::rh::proj::directx::perspective(fov_y_radians, aspect, near, far);
        Self {
            view_proj: proj * view,
            eye: eye.extend(1.0),
            light_dir: Vec3::new(-0.4, -1.0, -0.3).normalize().extend(0.0),
        }
    }

    /// An orthographic camera at `eye` looking at `target` (y up), seeing `width` × `height`
    /// world units around it, with a default light.
    #[must_use]
    pub fn orthographic_look_at(eye: Vec3, target: Vec3, width: f32, height: f32, near: f32, far: f32) -> Self {
        let view = glam::camera::rh::view::look_at_mat4(eye, target, Vec3::Y);
        let (w, h) = (0.5 * width, 0.5 * height);
        let proj = glam::camera::rh::proj::directx::orthographic(-w, w, -h, h, near, far);
        Self {
            view_proj: proj * view,
            ..Self::look_at(eye, target, 1.0, 1.0, near, far)
        }
    }

    /// The same camera lit from `direction` (where the light travels; normalized here).
    #[must_use]
    pub fn with_light(self, direction: Vec3) -> Self {
        Self {
            light_dir: direction.normalize().extend(0.0),
            ..self
        }
    }
}

wgsl_struct! {
    /// The built-in skinned renderer's camera uniform (`shaders/skin.wgsl`'s binding 0). WGSL
    /// `SkinView`.
    #[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
    pub struct SkinView as "SkinView" {
        /// The camera ([`crate::gpu::SkinnedRenderer::set_camera`]).
        pub camera: Camera,
        /// `x`: 1 when the LOD tint is on ([`crate::gpu::SkinnedRenderer::set_lod_tint`]), 0
        /// when off; `yzw` unused.
        pub lod_tint: UVec4,
    }
}
