//! Table definitions, matching `migrations/` (`shared/` rendered for each
//! backend, and `postgres/`). The migration tests check every column here
//! against both databases.

diesel::table! {
    partners (id) {
        id -> Text,
        name -> Text,
        kind -> Text,
        benefits_admin -> Text,
        capabilities -> Text,
        live_enabled -> Bool,
        live_changed_at -> Nullable<BigInt>,
        created_at -> BigInt,
        embed_origins -> Text,
        commercial_done_at -> Nullable<BigInt>,
    }
}

diesel::table! {
    api_keys (id) {
        id -> Text,
        partner_id -> Text,
        mode -> Text,
        digest -> Text,
        prefix -> Text,
        sealed -> Nullable<Binary>,
        created_at -> BigInt,
        revoked_at -> Nullable<BigInt>,
    }
}

diesel::table! {
    groups (id) {
        id -> Text,
        partner_id -> Text,
        mode -> Text,
        status -> Text,
        company_name -> Text,
        domain -> Text,
        external_id -> Nullable<Text>,
        address -> Nullable<Text>,
        contact -> Nullable<Text>,
        current_coverage -> Nullable<Text>,
        census_member_count -> Integer,
        rating_digest -> Nullable<Text>,
        company_state -> Nullable<Text>,
        created_at -> BigInt,
        updated_at -> BigInt,
    }
}

diesel::table! {
    members (id) {
        id -> Text,
        group_id -> Text,
        partner_id -> Text,
        mode -> Text,
        external_id -> Nullable<Text>,
        email_key -> Nullable<Text>,
        position -> Integer,
        data -> Text,
        created_at -> BigInt,
        updated_at -> BigInt,
        enrollment_status -> Text,
        invitation_status -> Text,
        tier -> Nullable<Text>,
        effective_date -> Nullable<Text>,
        termination_date -> Nullable<Text>,
        cobra_deadline -> Nullable<Text>,
        status -> Text,
    }
}

diesel::table! {
    claims_aggregates (group_id, month, category) {
        group_id -> Text,
        partner_id -> Text,
        mode -> Text,
        month -> Text,
        category -> Text,
        amount_cents -> BigInt,
        member_count -> Integer,
    }
}

diesel::table! {
    quotes (id) {
        id -> Text,
        group_id -> Text,
        partner_id -> Text,
        mode -> Text,
        status -> Text,
        rating_digest -> Nullable<Text>,
        expires_at -> BigInt,
        body -> Text,
        created_at -> BigInt,
        kind -> Text,
        request_digest -> Nullable<Text>,
        acceptance -> Nullable<Text>,
    }
}

diesel::table! {
    embed_sessions (id) {
        id -> Text,
        token_hash -> Text,
        partner_id -> Text,
        mode -> Text,
        group_id -> Text,
        quote_id -> Text,
        state -> Text,
        version -> BigInt,
        created_at -> BigInt,
        expires_at -> BigInt,
    }
}

diesel::table! {
    enrollments (id) {
        id -> Text,
        group_id -> Text,
        quote_id -> Text,
        partner_id -> Text,
        mode -> Text,
        onboarding_mode -> Text,
        body -> Text,
        created_at -> BigInt,
        onboarding -> Text,
        onboarding_revision -> BigInt,
    }
}

diesel::table! {
    events (id) {
        id -> Text,
        partner_id -> Text,
        mode -> Text,
        event_type -> Text,
        data -> Text,
        created_at -> BigInt,
        state -> Text,
        attempts -> Integer,
        next_attempt_at_ms -> Nullable<BigInt>,
        locked_until_ms -> Nullable<BigInt>,
        last_status -> Nullable<Integer>,
    }
}

diesel::table! {
    jobs (id) {
        id -> Text,
        partner_id -> Text,
        mode -> Text,
        kind -> Text,
        group_id -> Nullable<Text>,
        payload -> Text,
        state -> Text,
        attempts -> Integer,
        run_after_ms -> BigInt,
        locked_until_ms -> Nullable<BigInt>,
        last_error -> Nullable<Text>,
        result -> Nullable<Text>,
        owner_id -> Nullable<Text>,
    }
}

diesel::table! {
    idempotency (partner_id, mode, idem_key) {
        partner_id -> Text,
        mode -> Text,
        idem_key -> Text,
        method -> Text,
        route -> Text,
        digest -> Text,
        state -> Text,
        status -> Nullable<Integer>,
        headers -> Nullable<Text>,
        body -> Nullable<Binary>,
        created_at -> BigInt,
        expires_at -> BigInt,
        owner_id -> Nullable<Text>,
        attempt -> Nullable<Text>,
    }
}

diesel::table! {
    rate_limits (bucket, window_start) {
        bucket -> Text,
        window_start -> BigInt,
        count -> Integer,
    }
}

diesel::table! {
    webhook_endpoints (partner_id, mode) {
        partner_id -> Text,
        mode -> Text,
        url -> Text,
        sealed_secret -> Binary,
        created_at -> BigInt,
        state -> Text,
        failing_since_ms -> Nullable<BigInt>,
        previous_sealed_secret -> Nullable<Binary>,
        previous_secret_expires_at -> Nullable<BigInt>,
    }
}

diesel::table! {
    webhook_attempts (id) {
        id -> Text,
        partner_id -> Text,
        mode -> Text,
        event_id -> Text,
        event_type -> Text,
        attempt -> Integer,
        created_at -> BigInt,
        status_code -> Nullable<Integer>,
        latency_ms -> Integer,
        outcome -> Text,
        failure_reason -> Nullable<Text>,
        response_body -> Nullable<Text>,
    }
}

diesel::table! {
    processes (id) {
        id -> Text,
        started_at_ms -> BigInt,
        heartbeat_at_ms -> BigInt,
    }
}

diesel::table! {
    creation_keys (partner_id, mode, idem_key) {
        partner_id -> Text,
        mode -> Text,
        idem_key -> Text,
        resource_id -> Text,
        created_at -> BigInt,
    }
}

diesel::table! {
    portal_accounts (enrollment_id) {
        enrollment_id -> Text,
        partner_id -> Text,
        mode -> Text,
        group_id -> Text,
        email -> Text,
        password_hash -> Nullable<Text>,
        failures -> Text,
        locked_until -> Nullable<BigInt>,
        created_at -> BigInt,
    }
}

diesel::table! {
    portal_links (token_hash) {
        token_hash -> Text,
        enrollment_id -> Text,
        token_sealed -> Text,
        created_at -> BigInt,
        expires_at -> BigInt,
        used_at -> Nullable<BigInt>,
        superseded_at -> Nullable<BigInt>,
    }
}

diesel::table! {
    portal_sessions (id_hash) {
        id_hash -> Text,
        enrollment_id -> Nullable<Text>,
        csrf -> Text,
        created_at -> BigInt,
        seen_at -> BigInt,
    }
}

diesel::joinable!(portal_links -> portal_accounts (enrollment_id));
diesel::joinable!(partner_user_links -> partner_users (user_id));

diesel::allow_tables_to_appear_in_same_query!(
    partners,
    api_keys,
    groups,
    members,
    claims_aggregates,
    quotes,
    enrollments,
    events,
    jobs,
    idempotency,
    rate_limits,
    webhook_endpoints,
    webhook_attempts,
    processes,
    creation_keys,
    portal_accounts,
    portal_links,
    portal_sessions,
    embed_sessions,
    partner_users,
    partner_user_links,
    partner_recovery_codes,
    partner_sessions,
    partner_audit,
);

diesel::table! {
    partner_users (id) {
        id -> Text,
        partner_id -> Text,
        email -> Text,
        role -> Text,
        password_hash -> Nullable<Text>,
        failures -> Text,
        locked_until -> Nullable<BigInt>,
        totp_sealed -> Nullable<Text>,
        totp_last_step -> Nullable<BigInt>,
        created_at -> BigInt,
    }
}

diesel::table! {
    partner_user_links (token_hash) {
        token_hash -> Text,
        user_id -> Text,
        created_at -> BigInt,
        expires_at -> BigInt,
        used_at -> Nullable<BigInt>,
        superseded_at -> Nullable<BigInt>,
    }
}

diesel::table! {
    partner_recovery_codes (user_id, code_hash) {
        user_id -> Text,
        code_hash -> Text,
        used_at -> Nullable<BigInt>,
    }
}

diesel::table! {
    partner_sessions (id_hash) {
        id_hash -> Text,
        user_id -> Nullable<Text>,
        second_factor_pending -> Bool,
        csrf -> Text,
        mode -> Text,
        created_at -> BigInt,
        seen_at -> BigInt,
    }
}

diesel::table! {
    partner_audit (id) {
        id -> Text,
        partner_id -> Text,
        created_at -> BigInt,
        user_email -> Text,
        ip -> Nullable<Text>,
        action -> Text,
        target -> Text,
    }
}
