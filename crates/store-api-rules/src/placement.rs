//! Where a design may sit inside a print area (rule 5 of custom line items), and helpers that compute
//! placements satisfying it.
//!
//! All numbers are inches. The print area's origin is its top edge, horizontally at its vertical center
//! line: `verticalOffsetFromTop` goes down from the top edge, `horizontalOffsetFromCenter` goes sideways from
//! the center line (its sign does not matter, the service uses its absolute value).

use store_api_raw::types;

use super::violation::ViolationKind;

/// How much a placement may exceed the print area, in inches, before it is refused: comparisons allow
/// this much for floating point error (for example a width computed as `area * (px_w / px_h)` that
/// comes out one rounding step too large). It is absolute, so it is meant for inch-scale values.
pub const PLACEMENT_TOLERANCE_INCHES: f64 = 1e-6;

/// The printable rectangle of a decoration location, in inches.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PrintArea {
    /// Width, inches.
    pub width: f64,
    /// Height, inches.
    pub height: f64,
}

impl PrintArea {
    /// A print area of `width` by `height` inches.
    pub fn new(width: f64, height: f64) -> Self {
        Self { width, height }
    }

    /// Whether both dimensions are finite and positive, i.e. something can be placed in it.
    fn is_usable(&self) -> bool {
        is_positive_finite(self.width) && is_positive_finite(self.height)
    }
}

impl From<&types::DecorationLocation> for PrintArea {
    /// The location's print area. A missing dimension counts as 0: no design fits in it, so
    /// [`Placement::check`] refuses every placement as too large.
    fn from(location: &types::DecorationLocation) -> Self {
        Self {
            width: location.physical_width.unwrap_or(0.0),
            height: location.physical_height.unwrap_or(0.0),
        }
    }
}

/// The size and position of a design in a print area: the placement fields of a
/// [`types::Decoration`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Placement {
    /// `physicalWidth`, inches; must be positive.
    pub width: f64,
    /// `physicalHeight`, inches; must be positive.
    pub height: f64,
    /// `horizontalOffsetFromCenter`, inches; 0 centers, the sign does not matter.
    pub horizontal_offset_from_center: f64,
    /// `verticalOffsetFromTop`, inches; must not be negative.
    pub vertical_offset_from_top: f64,
}

/// Where [`Placement::fit`] puts a design that does not fill the print area.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Align {
    /// Centered horizontally and vertically.
    Center,
    /// Centered horizontally, against the top edge (the usual placement on a shirt front).
    Top,
}

/// Why a placement breaks rule 5, or is not a valid placement at all. The first three variants are body
/// validation failures; the others are the service's two placement rules.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum PlacementError {
    /// A number is NaN or infinite.
    #[error("{field} must be a finite number")]
    NotFinite {
        /// The wire name of the field.
        field: &'static str,
    },
    /// `physicalWidth` or `physicalHeight` is 0 or less.
    #[error("{field} must be a positive number, got {value}")]
    NonPositiveSize {
        /// The wire name of the field.
        field: &'static str,
        /// Its value.
        value: f64,
    },
    /// `verticalOffsetFromTop` is negative.
    #[error("verticalOffsetFromTop must not be less than 0, got {value}")]
    NegativeVerticalOffset {
        /// Its value.
        value: f64,
    },
    /// `physicalWidth` exceeds the area width.
    #[error("physicalWidth {width} exceeds the print area width {area_width}")]
    WiderThanArea {
        /// `physicalWidth`.
        width: f64,
        /// The print area width.
        area_width: f64,
    },
    /// `physicalHeight` exceeds the area height.
    #[error("physicalHeight {height} exceeds the print area height {area_height}")]
    TallerThanArea {
        /// `physicalHeight`.
        height: f64,
        /// The print area height.
        area_height: f64,
    },
    /// `verticalOffsetFromTop + physicalHeight` exceeds the area height.
    #[error(
        "verticalOffsetFromTop {vertical_offset_from_top} + physicalHeight {height} exceeds the print area height {area_height}"
    )]
    PastBottomEdge {
        /// `verticalOffsetFromTop`.
        vertical_offset_from_top: f64,
        /// `physicalHeight`.
        height: f64,
        /// The print area height.
        area_height: f64,
    },
    /// `physicalWidth / 2 + |horizontalOffsetFromCenter|` exceeds half the area width.
    #[error(
        "physicalWidth/2 {} + |horizontalOffsetFromCenter| {} exceeds half the print area width {}",
        .width / 2.0,
        .horizontal_offset_from_center.abs(),
        .area_width / 2.0
    )]
    PastSideEdge {
        /// `physicalWidth`.
        width: f64,
        /// `horizontalOffsetFromCenter`.
        horizontal_offset_from_center: f64,
        /// The print area width.
        area_width: f64,
    },
}

impl PlacementError {
    /// The wire name of the decoration field the error is about.
    pub fn field(&self) -> &'static str {
        match self {
            PlacementError::NotFinite { field } | PlacementError::NonPositiveSize { field, .. } => {
                field
            }
            PlacementError::NegativeVerticalOffset { .. }
            | PlacementError::PastBottomEdge { .. } => "verticalOffsetFromTop",
            PlacementError::WiderThanArea { .. } => "physicalWidth",
            PlacementError::TallerThanArea { .. } => "physicalHeight",
            PlacementError::PastSideEdge { .. } => "horizontalOffsetFromCenter",
        }
    }

    /// The violation the service reports for this error.
    pub fn violation_kind(&self) -> ViolationKind {
        match self {
            PlacementError::NotFinite { .. } => ViolationKind::NotFiniteNumber,
            PlacementError::NonPositiveSize { .. } => ViolationKind::NonPositiveSize,
            PlacementError::NegativeVerticalOffset { .. } => ViolationKind::NegativeOffset,
            PlacementError::WiderThanArea { .. } | PlacementError::TallerThanArea { .. } => {
                ViolationKind::DesignLargerThanPrintArea
            }
            PlacementError::PastBottomEdge { .. } | PlacementError::PastSideEdge { .. } => {
                ViolationKind::DesignOutsidePrintArea
            }
        }
    }
}

impl From<&types::Decoration> for Placement {
    fn from(decoration: &types::Decoration) -> Self {
        Self {
            width: decoration.physical_width,
            height: decoration.physical_height,
            horizontal_offset_from_center: decoration.horizontal_offset_from_center,
            vertical_offset_from_top: decoration.vertical_offset_from_top,
        }
    }
}

/// An image's size in pixels: what [`Placement::fit`] keeps the aspect ratio of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImageSize {
    /// Width, pixels.
    pub width_px: u32,
    /// Height, pixels.
    pub height_px: u32,
}

impl ImageSize {
    /// An image of `width_px` by `height_px` pixels.
    pub fn new(width_px: u32, height_px: u32) -> Self {
        Self {
            width_px,
            height_px,
        }
    }
}

impl Placement {
    /// The largest placement of an image of `image`'s size inside `area` that keeps the image's
    /// aspect ratio (the service does not preserve it for you), aligned as asked.
    ///
    /// `None` when a pixel dimension is 0 or the area is empty (not finite and positive).
    ///
    /// ```
    /// use store_api_rules::{Align, ImageSize, Placement, PrintArea};
    ///
    /// // A 1200 x 600 px logo on a 12 x 16 in shirt front, against the top edge.
    /// let area = PrintArea::new(12.0, 16.0);
    /// let placement = Placement::fit(area, ImageSize::new(1200, 600), Align::Top).unwrap();
    /// assert_eq!((placement.width, placement.height), (12.0, 6.0));
    /// assert_eq!(placement.vertical_offset_from_top, 0.0);
    /// assert!(placement.check(area).is_ok());
    ///
    /// // Centered both ways instead.
    /// let centered = Placement::fit(area, ImageSize::new(1200, 600), Align::Center).unwrap();
    /// assert_eq!(centered.vertical_offset_from_top, 5.0);
    /// ```
    pub fn fit(area: PrintArea, image: ImageSize, align: Align) -> Option<Placement> {
        let ImageSize {
            width_px: image_px_width,
            height_px: image_px_height,
        } = image;
        if image_px_width == 0 || image_px_height == 0 || !area.is_usable() {
            return None;
        }
        let (px_width, px_height) = (f64::from(image_px_width), f64::from(image_px_height));
        let scale = (area.width / px_width).min(area.height / px_height);
        // `min` removes a rounding step past the edge on the side that touches it.
        let width = (px_width * scale).min(area.width);
        let height = (px_height * scale).min(area.height);
        // An extreme aspect ratio in a tiny area can underflow to 0.
        if !(width > 0.0 && height > 0.0) {
            return None;
        }
        let vertical_offset_from_top = match align {
            Align::Center => ((area.height - height) / 2.0).max(0.0),
            Align::Top => 0.0,
        };
        Some(Placement {
            width,
            height,
            horizontal_offset_from_center: 0.0,
            vertical_offset_from_top,
        })
    }

    /// A design of `width` by `height` inches centered both ways in `area`, unscaled.
    ///
    /// `None` when the size is not positive and finite, the area is empty, or the design does not fit
    /// (use [`Placement::fit`] or [`Placement::clamp`] to shrink it).
    pub fn center(width: f64, height: f64, area: PrintArea) -> Option<Placement> {
        let size_is_valid = is_positive_finite(width) && is_positive_finite(height);
        if !size_is_valid
            || !area.is_usable()
            || !within(width, area.width)
            || !within(height, area.height)
        {
            return None;
        }
        Some(Placement {
            width,
            height,
            horizontal_offset_from_center: 0.0,
            vertical_offset_from_top: ((area.height - height) / 2.0).max(0.0),
        })
    }

    /// This placement made to satisfy rule 5 in `area`: shrunk keeping its aspect ratio if it is larger
    /// than the area, then moved the least distance that brings it inside.
    ///
    /// Non-finite offsets become 0 and a negative `verticalOffsetFromTop` becomes 0. A size that is not
    /// positive and finite, or an empty area, cannot be repaired: the size is returned as is and
    /// [`Placement::check`] still refuses it.
    pub fn clamp(self, area: PrintArea) -> Placement {
        let mut placement = self;
        if !placement.horizontal_offset_from_center.is_finite() {
            placement.horizontal_offset_from_center = 0.0;
        }
        if !(placement.vertical_offset_from_top.is_finite()
            && placement.vertical_offset_from_top >= 0.0)
        {
            placement.vertical_offset_from_top = 0.0;
        }
        let size_is_valid =
            is_positive_finite(placement.width) && is_positive_finite(placement.height);
        if !size_is_valid || !area.is_usable() {
            return placement;
        }

        let scale = (area.width / placement.width).min(area.height / placement.height);
        if scale < 1.0 {
            placement.width = (placement.width * scale).min(area.width);
            placement.height = (placement.height * scale).min(area.height);
        }

        let lowest_top = (area.height - placement.height).max(0.0);
        placement.vertical_offset_from_top = placement.vertical_offset_from_top.min(lowest_top);
        let widest_offset = ((area.width - placement.width) / 2.0).max(0.0);
        placement.horizontal_offset_from_center = placement
            .horizontal_offset_from_center
            .clamp(-widest_offset, widest_offset);
        placement
    }

    /// Checks rule 5 in `area`, within [`PLACEMENT_TOLERANCE_INCHES`]:
    ///
    /// 1. the numbers are valid (finite; width and height positive; `verticalOffsetFromTop` not negative),
    ///    else a body-validation error;
    /// 2. `physicalWidth <= area width` and `physicalHeight <= area height`, else the design is larger
    ///    than the print area;
    /// 3. `verticalOffsetFromTop + physicalHeight <= area height` and
    ///    `physicalWidth / 2 + |horizontalOffsetFromCenter| <= area width / 2`, else the design is placed
    ///    outside the print area.
    ///
    /// The first failure found, in that order, is returned. An area with a NaN, infinite, zero or negative
    /// dimension fits nothing.
    pub fn check(&self, area: PrintArea) -> Result<(), PlacementError> {
        if !self.numbers_are_valid()
            && let Some(error) = self.number_errors().next()
        {
            return Err(error);
        }
        let area_is_finite = area.width.is_finite() && area.height.is_finite();
        if !area_is_finite || !within(self.width, area.width) {
            return Err(PlacementError::WiderThanArea {
                width: self.width,
                area_width: area.width,
            });
        }
        if !within(self.height, area.height) {
            return Err(PlacementError::TallerThanArea {
                height: self.height,
                area_height: area.height,
            });
        }
        if !within(self.vertical_offset_from_top + self.height, area.height) {
            return Err(PlacementError::PastBottomEdge {
                vertical_offset_from_top: self.vertical_offset_from_top,
                height: self.height,
                area_height: area.height,
            });
        }
        if !within(
            self.width / 2.0 + self.horizontal_offset_from_center.abs(),
            area.width / 2.0,
        ) {
            return Err(PlacementError::PastSideEdge {
                width: self.width,
                horizontal_offset_from_center: self.horizontal_offset_from_center,
                area_width: area.width,
            });
        }
        Ok(())
    }

    /// Writes this placement into the placement fields of `decoration`.
    pub fn apply_to(&self, decoration: &mut types::Decoration) {
        decoration.physical_width = self.width;
        decoration.physical_height = self.height;
        decoration.horizontal_offset_from_center = self.horizontal_offset_from_center;
        decoration.vertical_offset_from_top = self.vertical_offset_from_top;
    }

    /// Whether [`Placement::number_errors`] finds nothing, without building its errors (the valid path
    /// of every check runs this).
    pub(crate) fn numbers_are_valid(&self) -> bool {
        is_positive_finite(self.width)
            && is_positive_finite(self.height)
            && self.horizontal_offset_from_center.is_finite()
            && self.vertical_offset_from_top.is_finite()
            && self.vertical_offset_from_top >= 0.0
    }

    /// The body-validation problems of the numbers, one per field at most, in the wire's field order.
    pub fn number_errors(&self) -> impl Iterator<Item = PlacementError> {
        let vertical = self.vertical_offset_from_top;
        let vertical_error = if !vertical.is_finite() {
            Some(PlacementError::NotFinite {
                field: "verticalOffsetFromTop",
            })
        } else if vertical < 0.0 {
            Some(PlacementError::NegativeVerticalOffset { value: vertical })
        } else {
            None
        };
        let horizontal_error = (!self.horizontal_offset_from_center.is_finite()).then_some(
            PlacementError::NotFinite {
                field: "horizontalOffsetFromCenter",
            },
        );
        [
            size_error("physicalWidth", self.width),
            size_error("physicalHeight", self.height),
            horizontal_error,
            vertical_error,
        ]
        .into_iter()
        .flatten()
    }
}

/// The body-validation problem of a width or height, if any.
fn size_error(field: &'static str, value: f64) -> Option<PlacementError> {
    if !value.is_finite() {
        Some(PlacementError::NotFinite { field })
    } else if value <= 0.0 {
        Some(PlacementError::NonPositiveSize { field, value })
    } else {
        None
    }
}

/// `value <= limit` within the tolerance; false when either is NaN.
fn within(value: f64, limit: f64) -> bool {
    value <= limit + PLACEMENT_TOLERANCE_INCHES
}

fn is_positive_finite(value: f64) -> bool {
    value.is_finite() && value > 0.0
}

/// A placement from its four numbers (width, height, horizontal and vertical offset), for the tests of
/// this crate.
#[cfg(test)]
pub(crate) fn placement(width: f64, height: f64, horizontal: f64, vertical: f64) -> Placement {
    Placement {
        width,
        height,
        horizontal_offset_from_center: horizontal,
        vertical_offset_from_top: vertical,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// How a placement is judged, for comparing [`Placement::check`] with [`reference_check`].
    #[derive(Debug, PartialEq)]
    enum Verdict {
        Valid,
        InvalidNumbers,
        Larger,
        Outside,
    }

    fn verdict(result: Result<(), PlacementError>) -> Verdict {
        match result {
            Ok(()) => Verdict::Valid,
            Err(error) => match error.violation_kind() {
                ViolationKind::DesignLargerThanPrintArea => Verdict::Larger,
                ViolationKind::DesignOutsidePrintArea => Verdict::Outside,
                _ => Verdict::InvalidNumbers,
            },
        }
    }

    /// Rule 5 written out plainly from the specification, for finite positive areas.
    fn reference_check(p: &Placement, area: PrintArea) -> Verdict {
        let tol = PLACEMENT_TOLERANCE_INCHES;
        let numbers = [
            p.width,
            p.height,
            p.horizontal_offset_from_center,
            p.vertical_offset_from_top,
        ];
        if numbers.iter().any(|n| n.is_nan() || n.is_infinite())
            || p.width <= 0.0
            || p.height <= 0.0
            || p.vertical_offset_from_top < 0.0
        {
            return Verdict::InvalidNumbers;
        }
        if p.width > area.width + tol || p.height > area.height + tol {
            return Verdict::Larger;
        }
        if p.vertical_offset_from_top + p.height > area.height + tol
            || p.width / 2.0 + p.horizontal_offset_from_center.abs() > area.width / 2.0 + tol
        {
            return Verdict::Outside;
        }
        Verdict::Valid
    }

    fn area_strategy() -> impl Strategy<Value = PrintArea> {
        (0.01f64..1000.0, 0.01f64..1000.0).prop_map(|(w, h)| PrintArea::new(w, h))
    }

    /// Mostly quarter-inch steps, so placements land exactly on the edges, plus arbitrary values.
    fn inches() -> impl Strategy<Value = f64> {
        prop_oneof![
            (-8i32..=80).prop_map(|quarters| f64::from(quarters) / 4.0),
            -30.0f64..30.0,
            Just(f64::NAN),
            Just(f64::INFINITY),
            Just(-0.0),
        ]
    }

    #[test]
    fn exact_edges_fit_and_one_step_past_them_does_not() {
        let area = PrintArea::new(12.0, 16.0);
        assert_eq!(placement(12.0, 16.0, 0.0, 0.0).check(area), Ok(()));
        assert_eq!(placement(4.0, 4.0, 4.0, 12.0).check(area), Ok(()));
        assert_eq!(placement(4.0, 4.0, -4.0, 12.0).check(area), Ok(()));
        // Within the tolerance.
        assert_eq!(placement(12.0 + 1e-7, 4.0, 0.0, 0.0).check(area), Ok(()));

        assert_eq!(
            placement(12.5, 4.0, 0.0, 0.0).check(area),
            Err(PlacementError::WiderThanArea {
                width: 12.5,
                area_width: 12.0
            })
        );
        assert_eq!(
            placement(4.0, 16.0 + 1e-5, 0.0, 0.0)
                .check(area)
                .map_err(|e| e.field()),
            Err("physicalHeight")
        );
        assert_eq!(
            placement(4.0, 4.0, 0.0, 12.25).check(area),
            Err(PlacementError::PastBottomEdge {
                vertical_offset_from_top: 12.25,
                height: 4.0,
                area_height: 16.0
            })
        );
        let past_side = placement(4.0, 4.0, -4.25, 0.0).check(area).unwrap_err();
        assert_eq!(past_side.field(), "horizontalOffsetFromCenter");
        assert_eq!(
            past_side.to_string(),
            "physicalWidth/2 2 + |horizontalOffsetFromCenter| 4.25 exceeds half the print area width 6"
        );
    }

    #[test]
    fn invalid_numbers_are_reported_before_geometry_in_wire_order() {
        let area = PrintArea::new(12.0, 16.0);
        let p = placement(0.0, f64::NAN, f64::INFINITY, -1.0);
        let errors: Vec<_> = p.number_errors().collect();
        assert_eq!(
            errors,
            vec![
                PlacementError::NonPositiveSize {
                    field: "physicalWidth",
                    value: 0.0
                },
                PlacementError::NotFinite {
                    field: "physicalHeight"
                },
                PlacementError::NotFinite {
                    field: "horizontalOffsetFromCenter"
                },
                PlacementError::NegativeVerticalOffset { value: -1.0 },
            ]
        );
        assert_eq!(p.check(area), Err(errors[0]));
    }

    #[test]
    fn an_unusable_area_fits_nothing() {
        let p = placement(1.0, 1.0, 0.0, 0.0);
        for area in [
            PrintArea::new(f64::NAN, 10.0),
            PrintArea::new(10.0, f64::NAN),
            PrintArea::new(f64::INFINITY, 10.0),
            PrintArea::new(0.0, 10.0),
            PrintArea::from(&types::DecorationLocation::default()),
        ] {
            assert_eq!(verdict(p.check(area)), Verdict::Larger, "{area:?}");
            assert_eq!(
                Placement::fit(area, ImageSize::new(10, 10), Align::Center),
                None
            );
            assert_eq!(Placement::center(1.0, 1.0, area), None);
        }
    }

    #[test]
    fn fit_rejects_empty_images_and_fills_one_side() {
        let area = PrintArea::new(10.0, 10.0);
        assert_eq!(
            Placement::fit(area, ImageSize::new(0, 10), Align::Top),
            None
        );
        assert_eq!(
            Placement::fit(area, ImageSize::new(10, 0), Align::Top),
            None
        );
        let tall = Placement::fit(area, ImageSize::new(100, 400), Align::Center).unwrap();
        assert_eq!(tall, placement(2.5, 10.0, 0.0, 0.0));
    }

    #[test]
    fn center_refuses_designs_that_do_not_fit() {
        let area = PrintArea::new(12.0, 16.0);
        assert_eq!(
            Placement::center(4.0, 6.0, area),
            Some(placement(4.0, 6.0, 0.0, 5.0))
        );
        assert_eq!(Placement::center(13.0, 6.0, area), None);
        assert_eq!(Placement::center(4.0, 0.0, area), None);
    }

    #[test]
    fn clamp_shrinks_keeping_the_aspect_ratio_then_moves_inside() {
        let area = PrintArea::new(12.0, 16.0);
        let clamped = placement(24.0, 8.0, 5.0, 20.0).clamp(area);
        assert_eq!(clamped, placement(12.0, 4.0, 0.0, 12.0));
        let moved = placement(4.0, 4.0, -7.0, f64::NAN).clamp(area);
        assert_eq!(moved, placement(4.0, 4.0, -4.0, 0.0));
    }

    #[test]
    fn placement_round_trips_through_a_decoration() {
        let mut decoration = types::Decoration::new(types::DecorationRequired {
            artwork_id: "art".into(),
            decoration_location: "front".into(),
            decoration_method: store_api_raw::open::DecorationMethod::DirectToGarment,
            physical_height: 1.0,
            physical_width: 1.0,
        });
        let p = placement(3.0, 2.0, -1.0, 0.5);
        p.apply_to(&mut decoration);
        assert_eq!(Placement::from(&decoration), p);
    }

    proptest! {
        /// The fast path of the valid case agrees with the full list of number errors.
        #[test]
        fn numbers_are_valid_exactly_when_there_is_no_number_error(
            width in prop_oneof![any::<f64>(), Just(0.0), Just(-0.0), Just(f64::NAN), Just(1.5)],
            height in prop_oneof![any::<f64>(), Just(0.0), Just(f64::INFINITY), Just(2.0)],
            horizontal in prop_oneof![any::<f64>(), Just(f64::NEG_INFINITY), Just(-3.0)],
            vertical in prop_oneof![any::<f64>(), Just(-0.0), Just(-1e-300), Just(0.0), Just(4.0)],
        ) {
            let p = placement(width, height, horizontal, vertical);
            prop_assert_eq!(p.numbers_are_valid(), p.number_errors().next().is_none());
        }

        #[test]
        fn fit_always_passes_check(
            area in area_strategy(),
            px_width in 1u32..=u32::MAX,
            px_height in 1u32..=u32::MAX,
            top in any::<bool>(),
        ) {
            let align = if top { Align::Top } else { Align::Center };
            let p = Placement::fit(area, ImageSize::new(px_width, px_height), align).unwrap();
            prop_assert_eq!(p.check(area), Ok(()));
            // Aspect ratio kept, and the design touches the area on at least one side.
            let expected_ratio = f64::from(px_width) / f64::from(px_height);
            prop_assert!(((p.width / p.height) / expected_ratio - 1.0).abs() < 1e-9);
            prop_assert!(
                (p.width - area.width).abs() < 1e-9 * area.width
                    || (p.height - area.height).abs() < 1e-9 * area.height
            );
        }

        #[test]
        fn center_passes_check_whenever_the_size_fits(
            area in area_strategy(),
            width in 0.001f64..1200.0,
            height in 0.001f64..1200.0,
        ) {
            match Placement::center(width, height, area) {
                Some(p) => prop_assert_eq!(p.check(area), Ok(())),
                None => prop_assert!(width > area.width || height > area.height),
            }
        }

        #[test]
        fn clamp_of_a_positive_size_passes_check(
            area in area_strategy(),
            width in 0.001f64..3000.0,
            height in 0.001f64..3000.0,
            horizontal in inches(),
            vertical in inches(),
        ) {
            let original = placement(width, height, horizontal, vertical);
            let clamped = original.clamp(area);
            prop_assert_eq!(clamped.check(area), Ok(()));
            if original.check(area).is_ok() {
                // Nothing to repair: a valid placement is left alone, bar NaN-free offsets.
                prop_assert_eq!(clamped, original);
            }
        }

        #[test]
        fn check_agrees_with_the_plain_reading_of_rule_5(
            area in area_strategy(),
            width in inches(),
            height in inches(),
            horizontal in inches(),
            vertical in inches(),
        ) {
            let p = placement(width, height, horizontal, vertical);
            prop_assert_eq!(verdict(p.check(area)), reference_check(&p, area));
        }

        #[test]
        fn check_agrees_on_quarter_inch_areas(
            area_quarters in (1i32..=64, 1i32..=64),
            width in inches(),
            height in inches(),
            horizontal in inches(),
            vertical in inches(),
        ) {
            // Areas on the same grid as the placements, so edges coincide exactly.
            let area = PrintArea::new(f64::from(area_quarters.0) / 4.0, f64::from(area_quarters.1) / 4.0);
            let p = placement(width, height, horizontal, vertical);
            prop_assert_eq!(verdict(p.check(area)), reference_check(&p, area));
        }
    }
}
