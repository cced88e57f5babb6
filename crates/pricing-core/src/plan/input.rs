//! The plans partners send: the explicit `plan` of price-on-plan and the
//! market plans (`BrokerPlan`), snake_case with camelCase aliases. Each
//! keeps its own field list (its wire order and documentation); the fields
//! both send are read through one [`Shared`] view by one set of rules.

use serde::{Deserialize, Serialize};
use time::Date;

use crate::error::FieldError;
use crate::household::Tier;
use crate::money::Amount;
use crate::plan::MAX_MEMBER_RATES;

/// Monthly rates by household tier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = TierRatesIn))]
pub struct TierRates {
    /// Employee only.
    #[serde(alias = "employeeOnly")]
    pub employee_only: i64,
    /// Employee and spouse.
    #[serde(alias = "employeeSpouse")]
    pub employee_spouse: i64,
    /// Employee and children.
    #[serde(alias = "employeeChildren")]
    pub employee_children: i64,
    /// Family.
    pub family: i64,
}

impl TierRates {
    /// An error for every rate outside the monthly range, with
    /// `prefix.<tier>` paths.
    pub(crate) fn out_of_range(&self, prefix: &str, index: Option<usize>) -> Vec<FieldError> {
        [
            ("employee_only", self.employee_only),
            ("employee_spouse", self.employee_spouse),
            ("employee_children", self.employee_children),
            ("family", self.family),
        ]
        .into_iter()
        .filter_map(|(name, v)| Amount::Monthly.check(&format!("{prefix}.{name}"), index, v))
        .collect()
    }

    /// The rate of a tier.
    #[must_use]
    pub fn get(&self, tier: Tier) -> i64 {
        match tier {
            Tier::EmployeeOnly => self.employee_only,
            Tier::EmployeeSpouse => self.employee_spouse,
            Tier::EmployeeChildren => self.employee_children,
            Tier::Family => self.family,
        }
    }
}

/// The exact monthly rate of one employee's household.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = MemberRateIn))]
pub struct MemberRate {
    /// Census `external_id`.
    #[serde(alias = "externalId")]
    pub external_id: String,
    /// Monthly cents for the household.
    #[serde(alias = "monthlyCents")]
    pub monthly_cents: i64,
}

impl MemberRate {
    /// An error when the rate is outside the monthly range, with a
    /// `prefix.monthly_cents` path.
    pub(crate) fn out_of_range(&self, prefix: &str, index: Option<usize>) -> Option<FieldError> {
        Amount::Monthly.check(
            &format!("{prefix}.monthly_cents"),
            index,
            self.monthly_cents,
        )
    }
}

/// The one plan a partner prices on (`plan` of `POST /price-on-plan`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = PartnerPlanIn))]
pub struct PartnerPlan {
    /// Carrier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub carrier: Option<String>,
    /// Plan name.
    #[serde(default, alias = "planName", skip_serializing_if = "Option::is_none")]
    pub plan_name: Option<String>,
    /// `PPO`, `EPO` or `POS` (required).
    #[serde(default, alias = "planType", skip_serializing_if = "Option::is_none")]
    pub plan_type: Option<String>,
    /// Network.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<String>,
    /// Must be true (required).
    #[serde(
        default,
        alias = "hsaEligible",
        skip_serializing_if = "Option::is_none"
    )]
    pub hsa_eligible: Option<bool>,
    /// Individual deductible (required).
    #[serde(
        default,
        alias = "deductibleIndividualCents",
        skip_serializing_if = "Option::is_none"
    )]
    pub deductible_individual_cents: Option<i64>,
    /// Family deductible; twice the individual one when omitted.
    #[serde(
        default,
        alias = "deductibleFamilyCents",
        skip_serializing_if = "Option::is_none"
    )]
    pub deductible_family_cents: Option<i64>,
    /// Individual out-of-pocket maximum (required).
    #[serde(
        default,
        alias = "oopMaxIndividualCents",
        skip_serializing_if = "Option::is_none"
    )]
    pub oop_max_individual_cents: Option<i64>,
    /// Family out-of-pocket maximum; twice the individual one when omitted.
    #[serde(
        default,
        alias = "oopMaxFamilyCents",
        skip_serializing_if = "Option::is_none"
    )]
    pub oop_max_family_cents: Option<i64>,
    /// Coinsurance after the deductible, whole percent (an addition to the
    /// specification's list; 20 when omitted, reported).
    #[serde(
        default,
        alias = "coinsurancePct",
        skip_serializing_if = "Option::is_none"
    )]
    pub coinsurance_pct: Option<u32>,
    /// Price per covered person per month.
    #[serde(default, alias = "pmpmCents", skip_serializing_if = "Option::is_none")]
    pub pmpm_cents: Option<i64>,
    /// Tier rates, used when neither member rates nor PMPM apply.
    #[serde(
        default,
        alias = "monthlyRatesCents",
        skip_serializing_if = "Option::is_none"
    )]
    pub monthly_rates_cents: Option<TierRates>,
    /// Exact household rates by census `external_id`; the preferred basis.
    #[serde(
        default,
        alias = "memberRatesCents",
        skip_serializing_if = "Option::is_none"
    )]
    pub member_rates_cents: Option<Vec<MemberRate>>,
}

/// Copays of a market plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = CopaysIn))]
pub struct Copays {
    /// Primary care.
    #[serde(
        default,
        alias = "primaryCare",
        skip_serializing_if = "Option::is_none"
    )]
    pub primary_care: Option<i64>,
    /// Specialist.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub specialist: Option<i64>,
    /// Urgent care.
    #[serde(default, alias = "urgentCare", skip_serializing_if = "Option::is_none")]
    pub urgent_care: Option<i64>,
    /// Emergency room.
    #[serde(
        default,
        alias = "emergencyRoom",
        skip_serializing_if = "Option::is_none"
    )]
    pub emergency_room: Option<i64>,
    /// Generic drugs.
    #[serde(default, alias = "rxGeneric", skip_serializing_if = "Option::is_none")]
    pub rx_generic: Option<i64>,
    /// Preferred drugs.
    #[serde(
        default,
        alias = "rxPreferred",
        skip_serializing_if = "Option::is_none"
    )]
    pub rx_preferred: Option<i64>,
    /// Specialty drugs.
    #[serde(
        default,
        alias = "rxSpecialty",
        skip_serializing_if = "Option::is_none"
    )]
    pub rx_specialty: Option<i64>,
}

impl Copays {
    /// An error for every copay outside the annual range (a copay counts
    /// toward the out-of-pocket maximum), with `prefix.<service>` paths.
    pub(crate) fn out_of_range(&self, prefix: &str, index: Option<usize>) -> Vec<FieldError> {
        [
            ("primary_care", self.primary_care),
            ("specialist", self.specialist),
            ("urgent_care", self.urgent_care),
            ("emergency_room", self.emergency_room),
            ("rx_generic", self.rx_generic),
            ("rx_preferred", self.rx_preferred),
            ("rx_specialty", self.rx_specialty),
        ]
        .into_iter()
        .filter_map(|(name, v)| Amount::Annual.check(&format!("{prefix}.{name}"), index, v?))
        .collect()
    }
}

/// A plan the partner quoted (`BrokerPlan`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = MarketPlanIn))]
pub struct MarketPlan {
    /// Carrier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub carrier: Option<String>,
    /// Plan name.
    #[serde(default, alias = "planName", skip_serializing_if = "Option::is_none")]
    pub plan_name: Option<String>,
    /// Plan type.
    #[serde(default, alias = "planType", skip_serializing_if = "Option::is_none")]
    pub plan_type: Option<String>,
    /// HSA-eligible.
    #[serde(
        default,
        alias = "hsaEligible",
        skip_serializing_if = "Option::is_none"
    )]
    pub hsa_eligible: Option<bool>,
    /// Individual deductible.
    #[serde(
        default,
        alias = "deductibleIndividualCents",
        skip_serializing_if = "Option::is_none"
    )]
    pub deductible_individual_cents: Option<i64>,
    /// Family deductible.
    #[serde(
        default,
        alias = "deductibleFamilyCents",
        skip_serializing_if = "Option::is_none"
    )]
    pub deductible_family_cents: Option<i64>,
    /// Individual out-of-pocket maximum.
    #[serde(
        default,
        alias = "oopMaxIndividualCents",
        skip_serializing_if = "Option::is_none"
    )]
    pub oop_max_individual_cents: Option<i64>,
    /// Family out-of-pocket maximum.
    #[serde(
        default,
        alias = "oopMaxFamilyCents",
        skip_serializing_if = "Option::is_none"
    )]
    pub oop_max_family_cents: Option<i64>,
    /// Metal tier (required).
    #[serde(alias = "metalTier")]
    pub metal_tier: String,
    /// Network.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<String>,
    /// Funding type, e.g. `fully_insured`.
    #[serde(
        default,
        alias = "fundingType",
        skip_serializing_if = "Option::is_none"
    )]
    pub funding_type: Option<String>,
    /// Tier rates.
    #[serde(
        default,
        alias = "monthlyRatesCents",
        skip_serializing_if = "Option::is_none"
    )]
    pub monthly_rates_cents: Option<TierRates>,
    /// Price per covered person per month.
    #[serde(default, alias = "pmpmCents", skip_serializing_if = "Option::is_none")]
    pub pmpm_cents: Option<i64>,
    /// Exact household rates.
    #[serde(
        default,
        alias = "memberRatesCents",
        skip_serializing_if = "Option::is_none"
    )]
    pub member_rates_cents: Option<Vec<MemberRate>>,
    /// Carrier's plan id.
    #[serde(
        default,
        alias = "carrierPlanId",
        skip_serializing_if = "Option::is_none"
    )]
    pub carrier_plan_id: Option<String>,
    /// Effective date.
    #[serde(
        default,
        alias = "effectiveDate",
        with = "crate::census::date_opt",
        skip_serializing_if = "Option::is_none"
    )]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = Date))]
    pub effective_date: Option<Date>,
    /// Rating ZIP.
    #[serde(default, alias = "ratingZip", skip_serializing_if = "Option::is_none")]
    pub rating_zip: Option<String>,
    /// Embedded deductible.
    #[serde(
        default,
        alias = "embeddedDeductible",
        skip_serializing_if = "Option::is_none"
    )]
    pub embedded_deductible: Option<bool>,
    /// Coinsurance, whole percent.
    #[serde(
        default,
        alias = "coinsurancePct",
        skip_serializing_if = "Option::is_none"
    )]
    pub coinsurance_pct: Option<u32>,
    /// Copays.
    #[serde(
        default,
        alias = "copaysCents",
        skip_serializing_if = "Option::is_none"
    )]
    pub copays_cents: Option<Copays>,
    /// Drug deductible.
    #[serde(
        default,
        alias = "rxDeductibleCents",
        skip_serializing_if = "Option::is_none"
    )]
    pub rx_deductible_cents: Option<i64>,
    /// Referral required.
    #[serde(
        default,
        alias = "referralRequired",
        skip_serializing_if = "Option::is_none"
    )]
    pub referral_required: Option<bool>,
    /// HSA deductible required.
    #[serde(
        default,
        alias = "hsaDeductibleRequired",
        skip_serializing_if = "Option::is_none"
    )]
    pub hsa_deductible_required: Option<bool>,
    /// Summary of benefits URL.
    #[serde(default, alias = "sbcUrl", skip_serializing_if = "Option::is_none")]
    pub sbc_url: Option<String>,
    /// Doctor search URL.
    #[serde(
        default,
        alias = "doctorSearchUrl",
        skip_serializing_if = "Option::is_none"
    )]
    pub doctor_search_url: Option<String>,
    /// Carrier logo URL.
    #[serde(
        default,
        alias = "carrierLogoUrl",
        skip_serializing_if = "Option::is_none"
    )]
    pub carrier_logo_url: Option<String>,
}

/// The fields the partner's plan and a market plan both send, under the
/// same names and read by the same rules: the design amounts, the
/// coinsurance and the rates.
pub(crate) struct Shared<'a> {
    pub deductible_individual_cents: Option<i64>,
    pub deductible_family_cents: Option<i64>,
    pub oop_max_individual_cents: Option<i64>,
    pub oop_max_family_cents: Option<i64>,
    pub coinsurance_pct: Option<u32>,
    pub pmpm_cents: Option<i64>,
    pub monthly_rates_cents: Option<TierRates>,
    pub member_rates_cents: Option<&'a [MemberRate]>,
}

/// `shared()` of the plan input types, whose shared fields are named alike.
macro_rules! impl_shared {
    ($($plan:ty),+) => {$(
        impl $plan {
            /// The fields read by the rules every plan shares.
            pub(crate) fn shared(&self) -> Shared<'_> {
                Shared {
                    deductible_individual_cents: self.deductible_individual_cents,
                    deductible_family_cents: self.deductible_family_cents,
                    oop_max_individual_cents: self.oop_max_individual_cents,
                    oop_max_family_cents: self.oop_max_family_cents,
                    coinsurance_pct: self.coinsurance_pct,
                    pmpm_cents: self.pmpm_cents,
                    monthly_rates_cents: self.monthly_rates_cents,
                    member_rates_cents: self.member_rates_cents.as_deref(),
                }
            }
        }
    )+};
}

impl_shared!(PartnerPlan, MarketPlan);

impl Shared<'_> {
    /// The amounts checked on every plan, in the order they are checked,
    /// each with its range: deductibles and maxima annual, PMPM monthly.
    pub(crate) fn amounts(&self) -> [(&'static str, Amount, Option<i64>); 5] {
        [
            (
                "deductible_individual_cents",
                Amount::Annual,
                self.deductible_individual_cents,
            ),
            (
                "deductible_family_cents",
                Amount::Annual,
                self.deductible_family_cents,
            ),
            (
                "oop_max_individual_cents",
                Amount::Annual,
                self.oop_max_individual_cents,
            ),
            (
                "oop_max_family_cents",
                Amount::Annual,
                self.oop_max_family_cents,
            ),
            ("pmpm_cents", Amount::Monthly, self.pmpm_cents),
        ]
    }

    /// An error when more than [`MAX_MEMBER_RATES`] member rates were
    /// sent, with a `prefix.member_rates_cents` path.
    pub(crate) fn too_many_member_rates(
        &self,
        prefix: &str,
        index: Option<usize>,
    ) -> Option<FieldError> {
        self.member_rates_cents
            .is_some_and(|r| r.len() > MAX_MEMBER_RATES)
            .then(|| FieldError {
                field: format!("{prefix}.member_rates_cents"),
                message: format!("at most {MAX_MEMBER_RATES} items"),
                index,
            })
    }

    /// An error when the coinsurance is above 100 percent, with a
    /// `prefix.coinsurance_pct` path.
    pub(crate) fn coinsurance_error(
        &self,
        prefix: &str,
        index: Option<usize>,
    ) -> Option<FieldError> {
        self.coinsurance_pct
            .is_some_and(|c| c > 100)
            .then(|| FieldError {
                field: format!("{prefix}.coinsurance_pct"),
                message: "must be 0 to 100".to_owned(),
                index,
            })
    }
}
