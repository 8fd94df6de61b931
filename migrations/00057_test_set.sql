-- +goose Up
-- A bot's own test set (issue 40): the tenant's test questions with the
-- facts their answer must and must not contain, the runs of the set through
-- the real engine (as test conversations: is_test, counted in no limit or
-- analytics), and each run's result per question, written as the run goes
-- so that its progress shows. A tenant runs one set at a time (the partial
-- unique index); a result keeps the question and facts it was checked
-- against, so that editing or deleting a case later changes no past run.
-- A tenant's deletion takes every row; a segment's sets its cases to none.
CREATE TABLE test_cases (
    id               uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id        uuid        NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    question         text        NOT NULL CHECK (char_length(question) BETWEEN 1 AND 1000),
    must_contain     text[]      NOT NULL DEFAULT '{}',
    must_not_contain text[]      NOT NULL DEFAULT '{}',
    segment_id       uuid        REFERENCES segments (id) ON DELETE SET NULL,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX test_cases_tenant ON test_cases (tenant_id, created_at, id);

CREATE TABLE test_runs (
    id              uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id       uuid        NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    status          text        NOT NULL CHECK (status IN ('running', 'done', 'failed')),
    judge           boolean     NOT NULL DEFAULT false,
    total           integer     NOT NULL CHECK (total >= 0),
    previous_run_id uuid        REFERENCES test_runs (id) ON DELETE SET NULL,
    error           text,
    started_at      timestamptz NOT NULL,
    finished_at     timestamptz
);
CREATE UNIQUE INDEX test_runs_one_running ON test_runs (tenant_id) WHERE status = 'running';
CREATE INDEX test_runs_latest ON test_runs (tenant_id, started_at DESC, id);

CREATE TABLE test_results (
    run_id          uuid        NOT NULL REFERENCES test_runs (id) ON DELETE CASCADE,
    position        integer     NOT NULL,
    tenant_id       uuid        NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    case_id         uuid        NOT NULL,
    question        text        NOT NULL,
    must_contain     text[]     NOT NULL,
    must_not_contain text[]     NOT NULL,
    segment_id      uuid,
    status          text        NOT NULL CHECK (status IN ('pending', 'passed', 'failed', 'error')),
    answer          text,
    sources         jsonb       NOT NULL DEFAULT '[]',
    checks          jsonb       NOT NULL DEFAULT '[]',
    error           text,
    conversation_id uuid,
    duration_ms     integer,
    PRIMARY KEY (run_id, position)
);
CREATE INDEX test_results_tenant ON test_results (tenant_id, run_id);

-- +goose Down
DROP TABLE test_results;
DROP TABLE test_runs;
DROP TABLE test_cases;
