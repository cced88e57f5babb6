//! Layer resolution: the most specific layer that defines a value wins.

use super::{GroupParams, Layer, VersionId, VersionLayer, VersionParams, invalid};
use crate::error::RateCardError;

pub(super) fn pick<'a, T>(
    chain: &[(&str, &'a Layer)],
    f: impl Fn(&'a Layer) -> Option<&'a T>,
) -> Option<&'a T> {
    chain.iter().rev().find_map(|(_, l)| f(l))
}

fn pick_version<'a, T>(
    chain: &[(&str, &'a Layer)],
    id: VersionId,
    f: impl Fn(&'a VersionLayer) -> Option<&'a T>,
) -> Option<&'a T> {
    chain
        .iter()
        .rev()
        .find_map(|(_, l)| l.versions.as_ref().and_then(|v| v.get(&id)).and_then(&f))
}

pub(super) fn resolve_group(
    version: &str,
    chain: &[(&str, &Layer)],
) -> Result<GroupParams, RateCardError> {
    fn need<'a, T>(v: Option<&'a T>, name: &str) -> Result<&'a T, RateCardError> {
        v.ok_or_else(|| invalid(format!("no layer defines {name}")))
    }
    let version_params = |id: VersionId| -> Result<VersionParams, RateCardError> {
        let field = |name: &str| format!("versions.{}.{name}", id.as_str());
        Ok(VersionParams {
            id,
            name: need(pick_version(chain, id, |v| v.name.as_ref()), &field("name"))?.clone(),
            description: need(
                pick_version(chain, id, |v| v.description.as_ref()),
                &field("description"),
            )?
            .clone(),
            member_oop_max_individual_cents: *need(
                pick_version(chain, id, |v| v.member_oop_max_individual_cents.as_ref()),
                &field("member_oop_max_individual_cents"),
            )?,
            member_oop_max_family_cents: *need(
                pick_version(chain, id, |v| v.member_oop_max_family_cents.as_ref()),
                &field("member_oop_max_family_cents"),
            )?,
            care_navigation_pmpm_cents: *need(
                pick_version(chain, id, |v| v.care_navigation_pmpm_cents.as_ref()),
                &field("care_navigation_pmpm_cents"),
            )?,
            admin_pmpm_cents: *need(
                pick_version(chain, id, |v| v.admin_pmpm_cents.as_ref()),
                &field("admin_pmpm_cents"),
            )?,
            risk_margin_bp: *need(
                pick_version(chain, id, |v| v.risk_margin_bp.as_ref()),
                &field("risk_margin_bp"),
            )?,
            features: pick_version(chain, id, |v| v.features.as_ref())
                .cloned()
                .unwrap_or_default(),
        })
    };
    let names: Vec<&str> = chain.iter().map(|(k, _)| *k).collect();
    Ok(GroupParams {
        card_version: version.to_owned(),
        quote_expiry_days: *need(
            pick(chain, |l| l.quote_expiry_days.as_ref()),
            "quote_expiry_days",
        )?,
        in_review_threshold: *need(
            pick(chain, |l| l.in_review_threshold.as_ref()),
            "in_review_threshold",
        )?,
        simulated_plan_years: *need(
            pick(chain, |l| l.simulated_plan_years.as_ref()),
            "simulated_plan_years",
        )?,
        household_mix_bp: *need(
            pick(chain, |l| l.household_mix_bp.as_ref()),
            "household_mix_bp",
        )?,
        two_children_share_bp: *need(
            pick(chain, |l| l.two_children_share_bp.as_ref()),
            "two_children_share_bp",
        )?,
        default_child_age: *need(
            pick(chain, |l| l.default_child_age.as_ref()),
            "default_child_age",
        )?,
        claims: *need(pick(chain, |l| l.claims.as_ref()), "claims")?,
        irs: *need(pick(chain, |l| l.irs.as_ref()), "irs")?,
        funding_breakdown: need(
            pick(chain, |l| l.funding_breakdown.as_ref()),
            "funding_breakdown",
        )?
        .clone(),
        benchmark_plan: need(pick(chain, |l| l.benchmark_plan.as_ref()), "benchmark_plan")?.clone(),
        market_base_plan: need(
            pick(chain, |l| l.market_base_plan.as_ref()),
            "market_base_plan",
        )?
        .clone(),
        versions: [
            version_params(VersionId::Diamond)?,
            version_params(VersionId::Value)?,
        ],
        source: format!("rate-card {version} {}", names.join(" > ")),
    })
}
